"""``POST ai/stream``: the RAG answer as it is generated.

Two conventions from one event stream (:meth:`Pipeline.events`):
- Datafari 7.0 NDJSON (default): one ``{"type", "data", "ts"}`` object per line —
  ``stream.started``, ``phase``, ``sources.add`` (one per source) then ``sources.final`` (always,
  before generation), ``message.delta``, ``message.final``, ``error`` (its code a string, as 7.0
  sends it), ``stream.completed``. A request refused before the answer starts is answered in
  NDJSON too: ``stream.started``, ``error``, ``stream.completed {ERROR}``.
- Server-Sent Events when the client sends ``Accept: text/event-stream`` (chat-core style):
  ``step`` (phases and sources), ``think`` (a reasoning model's ``<think>`` text), ``token``,
  ``done`` (final_response, usage, references), ``error``.

Errors before or during generation become an ``error`` event (with the partial answer) followed
by a clean end. If the client goes away, closing the generator closes the upstream LLM request.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, request, stream_with_context

from ...errors import DatafariError
from ...rag.pipeline import INTERNAL_EVENTS, QUALITY_KEYS, Event, RagRequest, Wrap
from ...text.markdown import answer_html
from ..http.answers import Error
from ..http.auth import current_access
from ..http.body import json_object
from ..http.capacity import Hold, slots
from ..http.context import get_services
from ..http.contract import CONVERSATION_REFUSALS, JSON, REFUSALS, Reply, endpoint, refusals
from ..http.errors import log_error
from ..http.shapes import RagBody
from .ai import parsed
from .conversations import bind_answer

bp = Blueprint("stream", __name__)


def _now_ms() -> int:
    return int(time.time() * 1000)


def rag_events(rag: RagRequest, hold: Hold | None = None, wrap: Wrap | None = None) -> Iterator[Event]:
    """The pipeline's events, with the start, the end and any error as events too; ``hold``'s
    answer slot is given back when they end; ``wrap`` records the turn and the token statistics."""
    services = get_services()
    yield Event("stream.started", {"id": uuid.uuid4().hex, "query": rag.query})
    partial: list[str] = []
    sources_sent = False
    phase: str | None = None  # the stage the answer was in, for an error's details
    answer = services.pipeline.events(rag, current_access(), stream=True)
    events = wrap(answer) if wrap else answer
    try:
        for event in events:
            if event.type == "message.delta":
                partial.append(event.data["text"])
            elif event.type == "phase":
                phase = event.data["name"]
            sources_sent = sources_sent or event.type == "sources.final"
            yield event
    except Exception as exc:  # never a broken stream: the client is told, then the stream ends
        error = exc if isinstance(exc, DatafariError) else DatafariError("ragTechnicalError", "The answer failed.")
        log_error(error, exc)
        if not sources_sent:  # sources are always delivered, even when empty
            yield Event("sources.final", {"items": []})
        usage = getattr(error, "usage", None) or {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        details = {"phase": phase, "sources_sent": sources_sent}
        yield Event("error", {**_error_data(error), "partial": "".join(partial), "usage": usage, "details": details})
        yield Event("stream.completed", {"status": "ERROR"})
        return
    finally:
        events.close()  # the client left: the turn is kept as idle, and
        answer.close()  # the LLM stream is cancelled upstream
        if hold is not None:
            hold.release()
    yield Event("stream.completed", {"status": "OK"})


def _error_data(error: DatafariError) -> dict[str, Any]:
    return {"code": error.code, "label": error.label, "message": error.message, "reason": error.reason}


def ndjson(events: Iterator[Event]) -> Iterator[str]:
    """Datafari 7.0's lines: each source announced as it is known, error codes as strings."""
    for event in events:
        if event.type in INTERNAL_EVENTS or event.type == "think":  # 7.0 has no thoughts event
            continue
        if event.type == "sources.final":
            for item in event.data["items"]:
                yield _line(Event("sources.add", item))
        elif event.type == "error":
            event = Event("error", {**event.data, "code": str(event.data["code"])})
        elif event.type == "message.final":  # the answer as the web UI shows it (Markdown, cleaned)
            event = Event(event.type, {**event.data, "html": answer_html(event.data["text"])})
        yield _line(event)


def _line(event: Event) -> str:
    return json.dumps({"type": event.type, "data": event.data, "ts": _now_ms()}, ensure_ascii=False) + "\n"


def refused(error: DatafariError) -> Iterator[Event]:
    """A request refused before its answer starts, as the events 7.0 sends for it."""
    yield Event("stream.started", {"id": uuid.uuid4().hex, "query": None})
    yield Event("error", _error_data(error))
    yield Event("stream.completed", {"status": "ERROR"})


# chat-core's step ids, one per stage of the pipeline
STEPS = {
    "rag:guard": "guard",
    "rag:faq": "faq",
    "rag:query rewriting": "rewriting",
    "rag:query enhancement": "enhancement",
    "rag:cache": "cache",
    "rag:retrieval": "search",
    "rag:rerank": "rerank",
    "rag:multihop": "multihop",
    "rag:reflect": "reflect",
    "rag:tree of thought": "tot",
    "rag:refine": "generation",
    "rag:map": "generation",
    "rag:merge": "generation",
    "rag:response generation": "generation",
    "rag:agent": "agent",
}


def sse(events: Iterator[Event], debug: bool = False) -> Iterator[str]:
    """chat-core style Server-Sent Events: a ``step`` per stage (its ``id``: guard, rewriting,
    cache, search, rerank, sources, generation), ``token`` pieces, ``done`` (final_response, usage,
    references, latency_ms), ``error``; with ``stream.debug``, ``debug`` events too (the rewritten
    queries, each stage's time since the start)."""
    started = time.monotonic()
    for event in events:
        payload: dict[str, Any] | None = None
        if event.type == "phase":
            name = event.data["name"]
            payload = {"type": "step", "id": STEPS.get(name, name), "name": name, "content": event.data}
        elif event.type == "sources.final":
            payload = {"type": "step", "id": "sources", "content": "sources", "references": event.data["items"]}
        elif event.type == "message.delta":
            payload = {"type": "token", "content": event.data["text"]}
        elif event.type == "think":  # a reasoning model's thoughts, apart from the answer
            payload = {"type": "think", "content": event.data["text"]}
        elif event.type == "message.final":
            payload = {
                "type": "done",
                "final_response": event.data["text"],
                "usage": event.data["usage"],
                "references": event.data["references"],
                "latency_ms": event.data["latency_ms"],
                **{k: event.data[k] for k in QUALITY_KEYS},
            }
        elif event.type in ("tool.start", "tool.end", "tool.result"):
            payload = {"type": "step", "id": "tool", "name": event.type, "content": event.data}
        elif event.type == "error":  # chat-core's names: the partial response beside 7.0's partial
            payload = {"type": "error", **event.data, "partial_response": event.data.get("partial", "")}
        if debug and event.type != "message.delta":
            elapsed = int((time.monotonic() - started) * 1000)
            note = {"type": "debug", "event": event.type, "elapsed_ms": elapsed}
            if event.type in ("phase", "query.rewritten"):
                note["data"] = event.data
            yield f"data: {json.dumps(note, ensure_ascii=False)}\n\n"
        if payload is not None:
            yield f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"


@bp.post("/ai/stream")
@endpoint(
    "The answer as it is generated: NDJSON, or SSE with Accept: text/event-stream",
    {
        200: Reply(
            "the events; a request refused before they start: Datafari's error JSON",
            {"application/x-ndjson": {"type": "string"}, "text/event-stream": {"type": "string"}, JSON: Error},
        ),
        **refusals(*REFUSALS, *CONVERSATION_REFUSALS),
    },
    RagBody,
)
def ai_stream() -> Response:
    """6.2's body (``query``, ``history`` of ``{role, content}``…) or 7.0's (``q``, ``{role,
    message}``, ``filters``; ``action`` rag, the one that streams)."""
    wants_sse = request.accept_mimetypes.best == "text/event-stream"
    mimetype = "text/event-stream" if wants_sse else "application/x-ndjson"
    try:
        action, rag, echo, keep = parsed(json_object("aiBadRequest"))
        if action not in ("rag", "agentic"):
            raise DatafariError("aiBadRequest", f"Only actions rag and agentic stream; send {action} to POST ai.")
    except DatafariError as exc:
        if wants_sse:  # chat-core clients get Datafari's error JSON, as before
            raise DatafariError("ragBadRequest", exc.reason) from None
        log_error(exc)
        return Response(ndjson(refused(exc)), mimetype=mimetype)
    try:
        rag, wrap = bind_answer(rag, echo.get("conversationId"), keep=keep)
    except DatafariError as exc:
        if wants_sse:
            raise
        log_error(exc)
        return Response(ndjson(refused(exc)), mimetype=mimetype)
    hold = Hold(slots())  # refused here, as JSON, when every answer slot is held
    events = rag_events(rag, hold, wrap)
    body = sse(events, get_services().settings.stream_debug) if wants_sse else ndjson(events)
    response = Response(stream_with_context(body), mimetype=mimetype)
    response.call_on_close(hold.release)  # a stream never read gives its slot back too
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"  # no proxy buffering of the stream
    return response
