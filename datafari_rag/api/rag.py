"""Datafari's RAG endpoints: ``POST ai/rag``, ``POST ai/summarize``, ``GET search/select?action=rag``."""

from __future__ import annotations

from flask import Blueprint, Response, request

from ..rag.errors import RagError
from ..rag.pipeline import RagRequest
from ..rag.prompts import LANGUAGES
from ..security.identity import current_access
from ..services import get_services
from . import responses
from .validation import parse_format, parse_id, parse_lang, parse_query, rag_request

bp = Blueprint("rag", __name__)


def accept_language() -> str | None:
    """The request's preferred answer language, from Accept-Language."""
    return request.accept_languages.best_match(list(LANGUAGES))


def run_rag(rag: RagRequest) -> Response:
    services = get_services()
    try:
        answer = services.pipeline.answer(rag, current_access())
    except RagError as exc:
        return responses.error(exc)
    return responses.ok(answer.message, answer.documents)


@bp.post("/ai/rag")
def ai_rag() -> Response:
    settings = get_services().settings
    body = request.get_json(silent=True)
    try:
        rag = rag_request(body, settings.query_max_length, accept_language())
    except RagError as exc:
        return responses.error(exc)
    return run_rag(rag)


def select_rag() -> Response:
    """``GET search/select?action=rag`` (Datafari's deprecated path): the same pipeline."""
    settings = get_services().settings
    try:
        rag = RagRequest(
            query=parse_query(request.args.get("q"), settings.query_max_length),
            doc_id=parse_id(request.args.get("id")),
            lang=parse_lang(request.args.get("lang")) or accept_language(),
            format=parse_format(request.args.get("format")),
        )
    except RagError as exc:
        return responses.error(exc)
    return run_rag(rag)


@bp.post("/ai/summarize")
def ai_summarize() -> Response:
    services = get_services()
    body = request.get_json(silent=True)
    try:
        if not isinstance(body, dict):
            raise RagError("summarizationBadRequest", "The request body must be a JSON object.")
        doc_id = parse_id(body.get("id"), "summarizationBadRequest")
        if doc_id is None:
            raise RagError("summarizationBadRequest", "'id' is required.")
        lang = parse_lang(body.get("lang"), "summarizationBadRequest") or accept_language()
        summary = services.pipeline.summarize(doc_id, lang, current_access())
    except RagError as exc:
        return responses.error(exc)
    return responses.ok(summary, [])
