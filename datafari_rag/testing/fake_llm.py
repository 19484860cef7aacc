"""A local fake OpenAI-compatible chat server that records every prompt it receives.

It is the test double of the *external* LLM: tests assert on exactly what the sidecar sent,
and choose what it answers (a function of the prompt) and how long it takes.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, Response, jsonify, request


def prompt_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(m.get("content") or "" for m in messages)


@dataclass
class FakeLlm:
    answer: Callable[[str], str] = lambda prompt: "A fake answer."
    delay: float = 0.0
    chunk_delay: float = 0.0  # between streamed pieces
    fail_after: int | None = None  # streamed pieces before the stream breaks
    streams_completed: int = 0
    streams_cut: int = 0  # streams the client closed before the end
    streams_open: int = 0
    first_piece_at: list[float] = field(default_factory=list)  # time.time() of each stream's first piece
    calls: list[list[dict[str, str]]] = field(default_factory=list)
    models: list[str | None] = field(default_factory=list)  # the "model" of each call (None: left out)
    tools: list[list[dict[str, Any]] | None] = field(default_factory=list)  # the "tools" of each call
    temperatures: list[float | None] = field(default_factory=list)  # the "temperature" of each call
    failing_models: set[str] = field(default_factory=set)  # calls naming one answer 503 (a model down)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def prompts(self) -> list[str]:
        """The whole prompt of each call, in order: every message's text, the system message first."""
        with self.lock:
            return [prompt_text(call) for call in self.calls]

    def messages(self) -> list[list[dict[str, str]]]:
        """The messages of each call, in order, as they were sent."""
        with self.lock:
            return [list(call) for call in self.calls]

    def wait_closed(self, timeout: float = 15.0) -> None:
        """Waits until every stream the stub began has ended (its bookkeeping runs just after
        the client has read the last byte)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if self.streams_open == 0:
                    return
            time.sleep(0.02)

    def reset(
        self,
        answer: Callable[[str], str] | None = None,
        delay: float = 0.0,
        chunk_delay: float = 0.0,
        fail_after: int | None = None,
    ) -> None:
        with self.lock:
            self.calls.clear()
            self.models.clear()
            self.tools.clear()
            self.temperatures.clear()
            self.failing_models.clear()
            self.streams_completed = self.streams_cut = 0
        self.answer = answer or (lambda prompt: "A fake answer.")
        self.delay, self.chunk_delay, self.fail_after = delay, chunk_delay, fail_after

    def app(self) -> Flask:
        app = Flask("fake_llm")

        @app.post("/v1/chat/completions")
        def completions() -> Response:
            body: dict[str, Any] = request.get_json()
            with self.lock:
                self.calls.append(body["messages"])
                self.models.append(body.get("model"))
                self.tools.append(body.get("tools"))
                self.temperatures.append(body.get("temperature"))
            if body.get("model") in self.failing_models:
                error = {"message": f"The model {body['model']} is overloaded.", "type": "server_error"}
                return Response(json.dumps({"error": error}), status=503, mimetype="application/json")
            if self.delay:
                time.sleep(self.delay)
            text: Any = self.answer(prompt_text(body["messages"]))
            if isinstance(text, dict) and "object_error" in text:  # vLLM's error, with HTTP 200, streamed or not
                said = {"object": "error", "message": text["object_error"], "type": "BadRequestError", "code": 400}
                return Response(json.dumps(said), status=200, mimetype="application/json")
            if isinstance(text, dict):  # a scripted tool call: {"tool_calls": [{"name", "arguments"}]}
                calls = [
                    {
                        "id": f"call_{i}",
                        "type": "function",
                        "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                    }
                    for i, c in enumerate(text["tool_calls"])
                ]
                message = {"role": "assistant", "content": text.get("content"), "tool_calls": calls}
                return jsonify(
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "fake"),
                        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                )
            if body.get("stream"):
                return Response(self._stream(body.get("model", "fake"), text), mimetype="text/event-stream")
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

    def _stream(self, model: str, text: str) -> Iterator[str]:
        def chunk(delta: dict[str, str], finish: str | None = None, **extra: Any) -> str:
            body = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
            return f"data: {json.dumps(body)}\n\n"

        finished = False
        with self.lock:
            self.streams_open += 1
        try:
            yield chunk({"role": "assistant", "content": ""})
            for i, piece in enumerate(re.findall(r"\S+\s*", text)):
                if self.fail_after is not None and i >= self.fail_after:
                    raise RuntimeError("the fake LLM breaks its stream")
                if self.chunk_delay:
                    time.sleep(self.chunk_delay)
                if i == 0:
                    self.first_piece_at.append(time.time())
                yield chunk({"content": piece})
            yield chunk({}, "stop")
            usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
            final = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [],
                "usage": usage,
            }
            yield f"data: {json.dumps(final)}\n\n"
            yield "data: [DONE]\n\n"
            finished = True
        finally:
            with self.lock:
                self.streams_open -= 1
                if finished:
                    self.streams_completed += 1
                else:
                    self.streams_cut += 1


def main() -> None:
    """``python -m datafari_rag.testing.fake_llm --port P --delay S``: the stub as its own process (benchmarks).

    Served by gunicorn (threads) rather than Werkzeug's development server, which closes every
    connection: a real LLM endpoint keeps connections alive, and so must its stand-in, or each
    call pays a new TCP connection on both sides of a benchmark."""
    import argparse

    from gunicorn.app.base import BaseApplication

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args()
    app = FakeLlm(delay=args.delay).app()
    options = {
        "bind": f"127.0.0.1:{args.port}",
        "workers": 1,
        "worker_class": "gthread",
        "threads": 256,
        "control_socket_disable": True,  # a stub needs none (and must not take a server's)
    }

    class Stub(BaseApplication):  # gunicorn's documented way to serve an app object
        def load_config(self) -> None:
            for key, value in {**options, "keepalive": 30, "loglevel": "warning"}.items():
                self.cfg.set(key, value)

        def load(self) -> Flask:
            return app

    Stub().run()


if __name__ == "__main__":
    main()
