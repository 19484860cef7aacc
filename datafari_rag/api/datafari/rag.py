"""Datafari's RAG endpoints: ``POST ai/rag``, ``POST ai/summarize``, ``GET search/select?action=rag``."""

from __future__ import annotations

from flask import Blueprint, Response, request

from ...errors import DatafariError
from ...prompts import LANGUAGES
from ...rag.pipeline import Pipeline, RagRequest, Wrap
from ..http.answers import Error, Ok
from ..http.auth import current_access
from ..http.body import json_object
from ..http.capacity import answer_slot
from ..http.context import get_services
from ..http.contract import CONVERSATION_REFUSALS, REFUSALS, endpoint, json, refusals
from ..http.errors import ok
from ..http.shapes import RagBody, Reading, SummarizeBody, rag_request
from ..http.validation import parse_format, parse_id, parse_lang, parse_prompt, parse_query
from .conversations import bind_answer, conversation_id

bp = Blueprint("rag", __name__)
ANSWER = json({"oneOf": [Ok, Error]}, "the answer, or Datafari's error JSON (HTTP 200 for both)")


def accept_language() -> str | None:
    """The request's preferred answer language, from Accept-Language."""
    return request.accept_languages.best_match(list(LANGUAGES))


def run_rag(rag: RagRequest, wrap: Wrap | None = None, pipeline: Pipeline | None = None) -> Response:
    """The answer as ``ai/rag`` sends it, with each step's time in ``Server-Timing`` (W3C's header:
    ``retrieve;dur=4.210, generate;dur=1.004``, milliseconds); ``pipeline``: a workflow's (default:
    the configuration's)."""
    with answer_slot():
        answer = (pipeline or get_services().pipeline).answer(rag, current_access(), wrap)
    response = ok(answer.message, answer.documents, answer.references, answer.usage, answer.latency_ms, answer.quality)
    response.headers["Server-Timing"] = server_timing(answer.timings)
    return response


def server_timing(timings: dict[str, float]) -> str:
    """Each step's seconds as a ``Server-Timing`` value, in milliseconds."""
    return ", ".join(f"{step};dur={seconds * 1000:.3f}" for step, seconds in timings.items())


@bp.post("/ai/rag")
@endpoint(
    "An answer from the index (with id: from that one document)",
    {200: ANSWER, **refusals(*REFUSALS, *CONVERSATION_REFUSALS)},
    RagBody,
)
def ai_rag() -> Response:
    body = json_object("ragBadRequest")
    rag, keep = rag_request(body, get_services().settings, accept_language())
    return run_rag(*bind_answer(rag, conversation_id(body, "ragBadRequest"), keep=keep))


def select_rag() -> Response:
    """``GET search/select?action=rag`` (Datafari's deprecated path): the same pipeline."""
    settings = get_services().settings
    rag = RagRequest(
        query=parse_query(request.args.get("q"), settings.query_max_length),
        doc_id=parse_id(request.args.get("id")),
        lang=parse_lang(request.args.get("lang")) or accept_language(),
        format=parse_format(request.args.get("format")),
        question=parse_prompt(request.args.get("prompt"), settings.query_max_length),
    )
    return run_rag(*bind_answer(rag, None))


@bp.post("/ai/summarize")
@endpoint("A summary of one document", {200: ANSWER, **refusals(*REFUSALS)}, SummarizeBody)
def ai_summarize() -> Response:
    label = "summarizationBadRequest"
    body = SummarizeBody.model_validate(json_object(label), context=Reading(label, 0))
    if body.id is None:
        raise DatafariError(label, "'id' is required.")
    with answer_slot("summarizationTechnicalError"):
        summary = get_services().pipeline.summarize(body.id, body.lang or accept_language(), current_access())
    return ok(summary, [])
