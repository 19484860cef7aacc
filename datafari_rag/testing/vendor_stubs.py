"""Local recording stubs of Anthropic's Messages API and Google's Gemini API, as their SDKs call
them (JSON answers and server-sent event streams, token usage, error bodies), for the LLM services
of ``ai.llm.service=anthropic|gemini``, and Gemini's embeddings (``batchEmbedContents``,
``embedContent``) for ``solr.embeddings.service=gemini``. Each keeps every request body it received."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterator
from typing import Any

from flask import Flask, Response, jsonify, request

Answer = Callable[[dict[str, Any]], str]  # the request body -> the answer's text


def _sse(events: list[tuple[str | None, dict[str, Any]]]) -> Iterator[str]:
    for name, data in events:
        yield (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"


class _Recording:
    def __init__(self, answer: Answer | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.answer: Answer = answer or (lambda body: "A stub answer.")
        self.fail: list[int] = []  # statuses to answer with first, one per request
        self.lock = threading.Lock()

    def _record(self) -> tuple[dict[str, Any], int | None]:
        body = request.get_json()
        with self.lock:
            self.requests.append(body)
            self.paths.append(request.full_path)
            return body, (self.fail.pop(0) if self.fail else None)


class AnthropicStub(_Recording):
    def app(self) -> Flask:
        app = Flask("anthropic-stub")

        @app.post("/v1/messages")
        def messages() -> Response | tuple[Response, int]:
            body, failure = self._record()
            if failure:
                kind = "overloaded_error" if failure >= 500 else "invalid_request_error"
                return jsonify({"type": "error", "error": {"type": kind, "message": f"stub {failure}"}}), failure
            text = self.answer(body)
            tokens_in, tokens_out = 11, max(1, len(text.split()))
            if not body.get("stream"):
                return jsonify(
                    {
                        "id": "msg_stub",
                        "type": "message",
                        "role": "assistant",
                        "model": body["model"],
                        "content": [{"type": "text", "text": text}],
                        "stop_reason": "end_turn",
                        "stop_sequence": None,
                        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
                    }
                )
            start = {
                "id": "msg_stub",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": tokens_in, "output_tokens": 1},
            }
            words = [w + " " for w in text.split(" ")]
            words[-1] = words[-1].rstrip(" ")
            events: list[tuple[str | None, dict[str, Any]]] = [
                ("message_start", {"type": "message_start", "message": start}),
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                ),
                *(
                    (
                        "content_block_delta",
                        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": w}},
                    )
                    for w in words
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                        "usage": {"output_tokens": tokens_out},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ]
            return Response(_sse(events), mimetype="text/event-stream")

        return app


Embed = Callable[[list[str]], list[list[float]]]


def _shortened(vector: list[float], size: int | None) -> list[float]:
    """Gemini's outputDimensionality: the first ``size`` values, made unit length again."""
    if not size:
        return vector
    head = vector[:size]
    norm = math.sqrt(sum(v * v for v in head)) or 1.0
    return [v / norm for v in head]


class GeminiStub(_Recording):
    def __init__(self, answer: Answer | None = None, embed: Embed | None = None) -> None:
        super().__init__(answer)
        self.embed = embed  # what gives the embeddings' values (a real model, in the tests)
        self.keys: list[str | None] = []  # the x-goog-api-key of each request
        self.agents: list[str] = []  # the User-Agent of each request (Solr's Java client, the SDK…)

    def _embeddings(self, model_action: str, body: dict[str, Any]) -> Response | tuple[Response, int]:
        if self.embed is None:
            return jsonify({"error": {"code": 404, "message": "no embedding model", "status": "NOT_FOUND"}}), 404
        single = model_action.endswith(":embedContent")
        asked = [body] if single else body["requests"]
        texts = [" ".join(p["text"] for p in r["content"]["parts"]) for r in asked]
        vectors = [_shortened(v, r.get("outputDimensionality")) for v, r in zip(self.embed(texts), asked, strict=True)]
        if single:
            return jsonify({"embedding": {"values": vectors[0]}})
        return jsonify({"embeddings": [{"values": v} for v in vectors]})

    def app(self) -> Flask:
        app = Flask("gemini-stub")

        def answer(text: str, whole: str | None) -> dict[str, Any]:
            """A response holding ``text``; the last one (``whole``: the answer's whole text) ends
            the answer and reports its usage."""
            out: dict[str, Any] = {
                "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}],
                "modelVersion": "gemini-stub",
            }
            if whole is not None:
                tokens = max(1, len(whole.split()))
                out["candidates"][0]["finishReason"] = "STOP"
                out["usageMetadata"] = {
                    "promptTokenCount": 13,
                    "candidatesTokenCount": tokens,
                    "totalTokenCount": 13 + tokens,
                }
            return out

        @app.post("/<version>/models/<model_action>")
        def generate(version: str, model_action: str) -> Response | tuple[Response, int]:
            body, failure = self._record()
            with self.lock:
                self.keys.append(request.headers.get("x-goog-api-key"))
                self.agents.append(request.headers.get("User-Agent", ""))
            if failure:
                status = {429: "RESOURCE_EXHAUSTED", 400: "INVALID_ARGUMENT"}.get(failure, "UNAVAILABLE")
                error = {"error": {"code": failure, "message": f"stub {failure}", "status": status}}
                return jsonify(error), failure
            if model_action.endswith((":batchEmbedContents", ":embedContent")):
                return self._embeddings(model_action, body)
            text = self.answer(body)
            if model_action.endswith(":generateContent"):
                return jsonify(answer(text, text))
            words = [w + " " for w in text.split(" ")]
            words[-1] = words[-1].rstrip(" ")
            chunks = [answer(w, text if i == len(words) - 1 else None) for i, w in enumerate(words)]
            return Response(_sse([(None, c) for c in chunks]), mimetype="text/event-stream")

        return app
