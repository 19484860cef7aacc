"""OpenAI-compatible ``POST /v1/chat/completions`` backed by the extractive generator.

Non-streaming answers are a ``chat.completion``; with ``"stream": true`` the answer is sent as
Server-Sent Events of ``chat.completion.chunk`` (word by word), ending with ``data: [DONE]``,
as OpenAI does, with ``usage`` in the last chunk when ``stream_options.include_usage`` asks.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from flask import Blueprint, Response, current_app, jsonify, request, stream_with_context

from ..config import EXTRACTIVE_MODEL
from .embeddings import openai_error
from .extractive import ExtractiveGenerator

if TYPE_CHECKING:
    from .gguf import GgufGenerator

ROLES = ("system", "user", "assistant", "developer", "tool")

bp = Blueprint("chat", __name__)


def _generator() -> ExtractiveGenerator | GgufGenerator:
    return current_app.extensions["generator"]


def _validate(body: Any) -> tuple[list[dict[str, str]], int] | Response:
    """(the messages, max_tokens), or an OpenAI error."""
    if not isinstance(body, dict):
        return openai_error(400, "The request body must be a JSON object.")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return openai_error(400, "'messages' must be a non-empty list.", "messages")
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            return openai_error(400, "Each message needs a valid 'role'.", "messages")
        calls_tools = message["role"] == "assistant" and message.get("tool_calls")
        if not isinstance(message.get("content"), str) and not (calls_tools and message.get("content") is None):
            return openai_error(400, "Each message needs a string 'content'.", "messages")
    max_tokens = body.get("max_tokens", body.get("max_completion_tokens", 200))
    if not isinstance(max_tokens, int) or max_tokens < 1:
        return openai_error(400, "'max_tokens' must be a positive integer.", "max_tokens")
    return [{"role": m["role"], "content": m.get("content") or ""} for m in messages], max_tokens


@bp.post("/v1/chat/completions")
def chat_completions() -> Response:
    body: Any = request.get_json(silent=True)  # checked by _validate
    valid = _validate(body)
    if isinstance(valid, Response):
        return valid
    messages, max_tokens = valid
    model = body.get("model") or EXTRACTIVE_MODEL
    if body.get("tools"):
        call = _tool_call(body["tools"], messages)
        if call is not None:
            return jsonify(_tool_completion(model, call))
        messages = _with_tool_results(messages)
    text = _generator().complete(messages, max_tokens)
    embedder = current_app.extensions["embedder"]
    prompt = "\n".join(m["content"] for m in messages)
    usage = {"prompt_tokens": embedder.count_tokens(prompt), "completion_tokens": embedder.count_tokens(text)}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    ident, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
    if body.get("stream"):
        with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return Response(
            stream_with_context(_chunks(ident, created, model, text, usage if with_usage else None)),
            mimetype="text/event-stream",
        )
    return jsonify(
        {
            "id": ident,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": usage,
        }
    )


def _chunks(ident: str, created: int, model: str, text: str, usage: dict[str, int] | None) -> Iterator[str]:
    def event(delta: dict[str, str], finish: str | None = None, extra: dict[str, Any] | None = None) -> str:
        chunk = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **(extra or {}),
        }
        return f"data: {json.dumps(chunk)}\n\n"

    yield event({"role": "assistant", "content": ""})
    for piece in re.findall(r"\S+\s*|\s+", text):
        yield event({"content": piece})
    yield event({}, "stop")
    if usage is not None:
        final = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": usage,
        }
        yield f"data: {json.dumps(final)}\n\n"
    yield "data: [DONE]\n\n"


# With tools (the agentic mode), the extractive generator is a simple honest agent: it first
# searches with the user's message, then answers from what the search returned.
SEARCH_TOOLS = ("hybrid_search", "bm25_search", "search")


def _tool_call(tools: Any, messages: list[dict[str, str]]) -> dict[str, Any] | None:
    """The search to run first, or None once a tool has answered."""
    if any(m["role"] == "tool" for m in messages):
        return None
    names = [t.get("function", {}).get("name") for t in tools if isinstance(t, dict)]
    name = next((n for n in SEARCH_TOOLS if n in names), None)
    users = [m["content"] for m in messages if m["role"] == "user"]
    if name is None or not users:
        return None
    return {
        "id": f"call_{uuid.uuid4().hex[:12]}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps({"query": users[-1]})},
    }


def _tool_completion(model: str, call: dict[str, Any]) -> dict[str, Any]:
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def _with_tool_results(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The instructions, then what the tools returned as the documents, and the user's question."""
    system = [m for m in messages if m["role"] in ("system", "developer")]
    found = "\n\n".join(m["content"] for m in messages if m["role"] == "tool")
    users = [m["content"] for m in messages if m["role"] == "user"]
    return [*system, {"role": "user", "content": f"Documents:\n{found}\n\nQuestion: {users[-1] if users else ''}"}]
