"""A local fake OpenAI-compatible chat server that records every prompt it receives.

It is the test double of the *external* LLM: tests assert on exactly what the sidecar sent,
and choose what it answers (a function of the prompt) and how long it takes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, Response, jsonify, request


@dataclass
class FakeLlm:
    answer: Callable[[str], str] = lambda prompt: "A fake answer."
    delay: float = 0.0
    calls: list[list[dict[str, str]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def prompts(self) -> list[str]:
        """The user prompt of each call, in order."""
        with self.lock:
            return [call[-1]["content"] for call in self.calls]

    def reset(self, answer: Callable[[str], str] | None = None, delay: float = 0.0) -> None:
        with self.lock:
            self.calls.clear()
        self.answer = answer or (lambda prompt: "A fake answer.")
        self.delay = delay

    def app(self) -> Flask:
        app = Flask("fake_llm")

        @app.post("/v1/chat/completions")
        def completions() -> Response:
            body: dict[str, Any] = request.get_json()
            with self.lock:
                self.calls.append(body["messages"])
            if self.delay:
                time.sleep(self.delay)
            text = self.answer(body["messages"][-1]["content"])
            return jsonify(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "fake"),
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
            )

        return app
