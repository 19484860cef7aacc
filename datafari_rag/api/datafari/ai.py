"""``POST ai``: Datafari 7.0's AI API — one endpoint, the work chosen by ``action``.

The body is 7.0's ``AiRequest``: ``query`` (or ``q``), ``action`` (``rag`` by default,
``summarize``, ``search``, ``agentic``: the LLM answers through the product's tools),
``id``, ``lang``, ``history`` (``{role, message}`` or 6.2's ``{role, content}``), ``filters``
(sources only among these values of whitelisted fields, ``filters.id`` among those documents),
``conversationId`` (or chat-core's ``room_id``: the stored conversation the turn belongs to, see
``api/datafari/conversations.py``) and ``memoryId`` (echoed). The answer is 7.0's
``ApiResponse``: ``{"status", "content": {"message", "sources": [{id, title, url, content}],
"docs"?, "conversationId"?, "error"?: {"code" (a string), "label", "message", "reason"}}}``;
a request 7.0 would refuse is HTTP 400, a service error HTTP 200 with ``status: ERROR``, as 7.0
answers.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify
from pydantic import ValidationError

from ...errors import DatafariError
from ...rag.pipeline import RagRequest
from ...retrieval import RetrievalContext
from ...retrieval.bm25 import bm25_documents
from ...solr import SolrError
from ..http.answers import AiResponse, Error
from ..http.auth import current_access
from ..http.body import json_object
from ..http.capacity import answer_slot
from ..http.context import get_services
from ..http.contract import endpoint, json, refusals
from ..http.errors import log_error
from ..http.shapes import AiBody, Reading, refusal
from .conversations import bind_answer, conversation_id
from .rag import accept_language

bp = Blueprint("ai", __name__)

KNOWN = set(AiBody.model_fields)  # 7.0's fields and 6.1/6.2's (ai/stream shares this parser)
PREVIEW = 200  # characters of a source's text, as 7.0's sources carry


def _error(exc: DatafariError, code: int | None = None) -> dict[str, Any]:
    """7.0's ApiError: the code a string, the sentence in the answer's language."""
    return {"code": str(code or exc.code), "label": exc.label, "message": exc.message, "reason": exc.reason}


def _answer(content: dict[str, Any], status: int = 200) -> tuple[Response, int]:
    failed = "error" in content
    return jsonify({"status": "ERROR" if failed else "OK", "content": content}), status


def parsed(body: dict[str, Any]) -> tuple[str, RagRequest, dict[str, Any], bool]:
    """The action, the request for the pipeline, what is echoed and whether the answer is kept (not
    chat-core's ``is_test``); raises DatafariError. The body checks itself (``AiBody``)."""
    settings = get_services().settings
    try:
        ai = AiBody.model_validate(body, context=Reading("aiBadRequest", settings.query_max_length, settings))
    except ValidationError as exc:
        raise DatafariError("aiBadRequest", refusal(exc)) from None
    echo = {}
    cid = conversation_id(body, "aiBadRequest")
    if cid is not None:
        echo["conversationId"] = cid
    if ai.memoryId is not None:
        echo["memoryId"] = ai.memoryId
    lang = ai.lang or accept_language()
    if ai.action == "summarize":
        return ai.action, RagRequest(query="", doc_id=ai.id, lang=lang), echo, True
    mode = "agentic" if ai.action == "agentic" else ai.search_type
    rag = RagRequest(ai.text, ai.id, lang, ai.history, ai.format, ai.filters, ai.prompt, mode)
    chat = ai.chat_core()
    return ai.action, chat.applied(rag), echo, not chat.is_test


def _search(rag: RagRequest) -> dict[str, Any]:
    """``action=search``: the best documents for the query, as the assistant's result list."""
    services = get_services()
    params = services.pipeline.retrieval_params
    ctx = RetrievalContext(services.main, services.vectors, params, current_access(), rag.filters)
    found = bm25_documents(ctx, rag.query, params.max_files)
    docs = [{"id": d.id, "title": d.title, "url": d.url, "content": d.content[:PREVIEW]} for d in found]
    return {"message": None, "docs": docs, "sources": []}


@bp.post("/ai")
@endpoint(
    "Datafari 7.0's AI API: rag, summarize, search, agentic",
    {code: json(AiResponse, "7.0's ApiResponse") for code in (200, 400, 404, 409, 500)}
    # refused before the view (Datafari's error JSON) or by it (7.0's ApiResponse)
    | {code: json({"oneOf": [AiResponse, Error]}, "a refusal") for code in (401, 403, 503)}
    | refusals(413, 415),
    AiBody,
)
def ai() -> tuple[Response, int]:
    try:
        action, rag, echo, keep = parsed(json_object("aiBadRequest"))
    except DatafariError as exc:
        return _answer({"message": None, "sources": [], "error": _error(exc, 400)}, 400)
    services = get_services()
    try:
        # a conversation must be the user's, whatever the action; only rag answers add a turn
        rag, wrap = bind_answer(rag, echo.get("conversationId"), "aiTechnicalError", keep)
        if action == "search":
            return _answer({**_search(rag), **echo})
        with answer_slot("aiTechnicalError"):
            if action == "summarize":
                summary = services.pipeline.summarize(rag.doc_id or "", rag.lang, current_access())
                return _answer({"message": summary, "sources": [], **echo})
            answer = services.pipeline.answer(rag, current_access(), wrap)
        sources = [{**d, "content": d.get("content", "")[:PREVIEW]} for d in answer.documents]
        cited = {"references": answer.references, "usage": answer.usage, "latency_ms": answer.latency_ms}
        cited |= answer.quality
        return _answer({"message": answer.message, "sources": sources, **cited, **echo})
    except DatafariError as exc:
        log_error(exc)
        status = exc.http_status(services.settings.errors_as_http_status)  # Datafari's own labels: 200
        return _answer({"message": None, "sources": [], **echo, "error": _error(exc)}, status)
    except SolrError as exc:
        error = DatafariError("aiTechnicalError", "The search failed.", detail=str(exc))
        log_error(error, exc)
        return _answer({"message": None, "sources": [], **echo, "error": _error(error)}, 500)
