"""``GET search/select`` (a search proxy to FileShare, or RAG with ``action=rag``) and
``GET search/vector`` (VectorMain's kNN). Both return Solr's JSON, filtered by the user's access.

Only the listed parameters are accepted (anything that would change what is searched — ``qt``,
``shards``, ``defType``, ``rq``, ``collection``… — is not among them). What the user wrote — the
query, filters, facets, the fields and order of the results — goes to Solr as the user's own
(:func:`..solr.search.from_user`) and is judged by Solr's door on the query Solr will run; a
refusal comes back as ``ragBadRequest`` with the door's reason. Facets, filters and highlighting
as DatafariUI asks for them: :mod:`.search_params`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from flask import Blueprint, Response, request

from ...chunk_fields import PARENT
from ...errors import DatafariError
from ...prompts import FORMATS, LANGUAGES
from ...retrieval.base import words_only
from ...retrieval.vector import guarded_knn
from ...solr import SolrError
from ...solr.search import from_user, refusal
from ..http.answers import Error, Ok, SolrResults, Suggestions
from ..http.auth import current_access
from ..http.context import get_services
from ..http.contract import REFUSALS, Param, endpoint, names, refusals
from ..http.contract import json as json_reply
from ..http.validation import MAX_ID_CHARS, bounded_int, field_list, sort_clause, without_acl_fields
from . import search_params
from .did_you_mean import suggestion
from .document_link import click_url
from .rag import select_rag

bp = Blueprint("search", __name__)

PREVIEW = ("OPEN_PREVIEW", "OPEN_PREVIEW_SHARED")  # DatafariUI's preview, from a result or a shared link
MODEL_NAME = re.compile(r"^[A-Za-z0-9_\-]{1,100}$")
MAX_SUGGESTIONS = 10
NAME_LIST = r"^\s*([A-Za-z_*][A-Za-z0-9_.]*)(\s*,\s*[A-Za-z_*][A-Za-z0-9_.]*)*\s*$"
OPERATOR = {"enum": ["AND", "OR"]}
FL = Param("fl", {"type": "string", "pattern": NAME_LIST})
WT = Param("wt", {"enum": ["json"]})
SELECT = (
    Param("q", {"type": "string", "minLength": 1}, "the query (edismax); with action=rag, the question", True),
    Param("q.op", OPERATOR),
    Param("start", {"type": "integer", "minimum": 0, "maximum": 10_000}),
    Param("rows", {"type": "integer", "minimum": 0, "maximum": 1000}),
    Param("sort", {"type": "string", "pattern": r"^\s*[A-Za-z_][A-Za-z0-9_]*\s+(asc|desc)\s*$"}),
    FL,
    Param(
        "action",
        {"enum": ["rag", *PREVIEW]},
        "rag: Datafari's deprecated RAG path; OPEN_PREVIEW(_SHARED): DatafariUI's preview (every stored field)",
    ),
    Param("format", {"enum": ["default", *sorted(FORMATS)]}),
    Param("lang", {"enum": sorted(LANGUAGES)}),
    Param("id", {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS}),
    WT,
)
PROMPT = Param("prompt", {"type": "string", "minLength": 1}, "with action=rag (6.1): the question the LLM answers")
VECTOR = (
    Param("queryrag", {"type": "string", "minLength": 1}, "the text to embed", True),
    Param("q", {"type": "string"}, "an alias of queryrag"),
    Param("topK", {"type": "integer", "minimum": 1, "maximum": 1000}),
    Param("rows", {"type": "integer", "minimum": 1, "maximum": 1000}),
    Param("model", {"type": "string", "pattern": MODEL_NAME.pattern}),
    FL,
    WT,
)
SUGGEST = (
    Param("q", {"type": "string", "maxLength": 200}, "what was typed; its last word is a prefix"),
    Param("rows", {"type": "integer", "minimum": 1, "maximum": MAX_SUGGESTIONS}),
    Param("action", {"enum": ["suggest"]}),
    Param("autocomplete", {"enum": ["true", "false"]}),
    Param("spellcheck.collateParam.q.op", OPERATOR),
    Param("aggregator"),
)
SELECT_PARAMS = names(SELECT)
SEARCH_PARAMS = SELECT_PARAMS | search_params.names()
RAG_SELECT_PARAMS = SELECT_PARAMS | {PROMPT.name}  # Datafari 6.1's question for the LLM, with action=rag
VECTOR_PARAMS = names(VECTOR)
SUGGEST_PARAMS = names(SUGGEST)


def only_params(allowed: set[str], per_field: bool = False) -> None:
    unknown = sorted(n for n in request.args if n not in allowed and not (per_field and search_params.is_per_field(n)))
    if unknown:
        raise DatafariError("ragBadRequest", f"Unsupported parameter(s): {', '.join(unknown)}.")
    for name in request.args:
        if len(request.args.getlist(name)) > 1 and name not in search_params.REPEATABLE:
            raise DatafariError("ragBadRequest", f"'{name}' may be given once.")
    if request.args.get("wt", "json") != "json":
        raise DatafariError("ragBadRequest", "'wt' must be json.")


def _text(name: str, value: str | None) -> str:
    if value is None or not value.strip():
        raise DatafariError("ragBadRequest", f"'{name}' is required.")
    if len(value) > get_services().settings.query_max_length:
        raise DatafariError("ragBadRequest", f"'{name}' is too long.")
    return search_params.query(name, value, get_services().settings.query_max_length)


def _solr_json(parsed: dict[str, Any], preview: bool = False) -> Response:
    """Solr's JSON with ``responseHeader.params`` holding the client's own parameters only
    (Solr's echo would hold the ACL parameters; they are asked not to be echoed, and replaced),
    each result with its ``click_url``; a preview's text as the list DatafariUI reads."""
    header = parsed.setdefault("responseHeader", {})
    header["params"] = search_params.echo(request.args)
    if isinstance(parsed.get("response"), dict) and isinstance(parsed["response"].get("docs"), list):
        docs = without_acl_fields(parsed["response"]["docs"])
        for doc in docs:
            link = click_url(doc)
            if link is not None:
                doc["click_url"] = link
            if preview and isinstance(doc.get("exactContent"), str):
                doc["exactContent"] = [doc["exactContent"]]  # Datafari's field is multi-valued
        parsed["response"]["docs"] = docs
    return Response(json.dumps(parsed, ensure_ascii=False), mimetype="application/json")


def solr_failure(exc: SolrError) -> DatafariError:
    """Solr refusing a search (400: a query its door refuses or it cannot parse) is the caller's
    mistake, said with the door's reason; any other failure a technical error."""
    said = refusal(exc)
    if said is not None:
        return DatafariError("ragBadRequest", said, detail=str(exc))
    if exc.status == 400:
        return DatafariError("ragBadRequest", "Solr could not run this search.", detail=str(exc))
    return DatafariError("ragTechnicalError", "The search failed.", detail=str(exc))


@bp.get("/search/select")
@endpoint(
    "Search FileShare (BM25) with the user's access; with action=rag, an answer",
    {
        200: json_reply(
            {"oneOf": [SolrResults, Ok, Error]}, "Solr's results, or (action=rag) the answer, or Datafari's error JSON"
        ),
        **refusals(*REFUSALS),
    },
    params=(*SELECT, PROMPT, *search_params.params()),
)
def select() -> Response:
    if request.args.get("action") == "rag":
        only_params(RAG_SELECT_PARAMS)
        return select_rag()
    only_params(SEARCH_PARAMS, per_field=True)
    action = request.args.get("action")
    if action not in (None, "", *PREVIEW):
        raise DatafariError("ragBadRequest", f"'action' must be rag, {', '.join(PREVIEW)} or absent.")
    services = get_services()
    q_op = request.args.get("q.op", services.settings.rag_operator)
    if q_op not in ("AND", "OR"):
        raise DatafariError("ragBadRequest", "'q.op' must be AND or OR.")
    params: list[tuple[str, Any]] = [
        from_user("q", _text("q", request.args.get("q"))),
        ("defType", "edismax"),
        ("q.op", q_op),
        ("start", bounded_int(request.args.get("start"), "start", 0, 10_000, 0)),
        ("rows", bounded_int(request.args.get("rows"), "rows", 0, 1000, 10)),
    ]
    if "fl" in request.args:
        params.append(from_user("fl", field_list(request.args["fl"], "fl")))
    elif action in PREVIEW:  # the preview shows the whole text and every property (the ACL's aside)
        params.append(from_user("fl", "*,score"))
    if "sort" in request.args:
        params.append(from_user("sort", sort_clause(request.args["sort"])))
    search_params.aggregator(request.args.get("aggregator"))
    params += search_params.facets_and_filters(request.args, services.settings.query_max_length)
    params += search_params.highlighting(request.args)
    access = current_access()
    try:
        found = services.main.search("select", params, access)
    except SolrError as exc:
        raise solr_failure(exc) from exc
    if not action and found.get("response", {}).get("numFound") == 0:  # a typo: "did you mean"
        filters = [p for p in params if p[0] == from_user("fq", "")[0]]
        said = suggestion(services.main, access, params[0][1], filters)
        if said is not None:
            found["spellcheck"] = {"suggestions": [], "collations": ["collation", said]}
    return _solr_json(found, action in PREVIEW)


@bp.get("/search/vector")
@endpoint(
    "kNN over VectorMain's chunks with the user's access and the parent check",
    {200: json_reply({"oneOf": [SolrResults, Error]}, "Solr's results or an error"), **refusals(*REFUSALS)},
    params=VECTOR,
)
def vector() -> Response:
    """kNN over VectorMain, as Solr's ``/vector`` answers it, without the chunks whose parent the
    user may not read now (the parent check of :mod:`datafari_rag.retrieval.guard`)."""
    only_params(VECTOR_PARAMS)
    services = get_services()
    s = services.settings
    text = request.args.get("queryrag") or request.args.get("q")
    top_k = bounded_int(request.args.get("topK"), "topK", 1, 1000, s.solr_top_k)
    rows = bounded_int(request.args.get("rows"), "rows", 1, 1000, top_k)
    model = request.args.get("model", s.query_model)
    if not MODEL_NAME.match(model):
        raise DatafariError("ragBadRequest", "'model' must be a model name.")
    params: list[tuple[str, Any]] = [
        ("queryrag", _text("queryrag", text)),
        ("model", model),
        ("vectorField", s.vector_field),
    ]
    asked = field_list(request.args["fl"], "fl").split(",") if "fl" in request.args else None
    if asked is not None:  # the check needs each chunk's parent; it is not returned unless asked for
        params.append(from_user("fl", ",".join(asked if PARENT in asked or "*" in asked else [*asked, PARENT])))
    try:
        docs, found = guarded_knn(services.vectors, services.main, current_access(), params, min(top_k, rows))
    except SolrError as exc:
        raise solr_failure(exc) from exc
    if asked is not None and PARENT not in asked and "*" not in asked:
        docs = [{k: v for k, v in d.items() if k != PARENT} for d in docs]
    header = {k: v for k, v in found.get("responseHeader", {}).items() if k != "params"}
    docs = without_acl_fields(docs)
    body = {"responseHeader": header, "response": {"numFound": len(docs), "start": 0, "docs": docs}}
    return Response(json.dumps(body, ensure_ascii=False), mimetype="application/json")


@bp.get("/search/suggest")
@endpoint(
    "DatafariUI's autocomplete: titles of readable documents matching what was typed",
    {200: json_reply({"oneOf": [Suggestions, Error]}, "collations, or an error"), **refusals(*REFUSALS)},
    params=SUGGEST,
)
def suggest() -> Response:
    """DatafariUI's autocomplete: the titles of the documents the user may read whose title
    matches what was typed (its last word as a prefix), as Solr's spellcheck collations (the shape
    the UI reads). A spellcheck dictionary would be built from every document, readable or not."""
    only_params(SUGGEST_PARAMS)
    search_params.aggregator(request.args.get("aggregator"))
    rows = bounded_int(request.args.get("rows"), "rows", 1, MAX_SUGGESTIONS, MAX_SUGGESTIONS)
    typed = request.args.get("q", "")
    # the words only (Solr's syntax characters dropped), lower-cased for the prefix query
    words = words_only(search_params.query("q", typed, 200)).lower().split() if typed.strip() else []
    titles: list[str] = []
    if words:
        last = f"(title_en:{words[-1]}* OR title_fr:{words[-1]}*)"
        params = [
            from_user("q", " AND ".join([*(f"title_en:{w}" for w in words[:-1]), last])),
            ("defType", "lucene"),
            ("fl", "title"),
            ("rows", rows * 3),  # several documents may share a title
            ("hl", "false"),
        ]
        try:
            found = get_services().main.search("select", params, current_access())
        except SolrError as exc:
            raise solr_failure(exc) from exc
        for doc in found["response"]["docs"]:
            title = doc.get("title")
            first = title[0] if isinstance(title, list) and title else title
            if isinstance(first, str) and first not in titles:
                titles.append(first)
    collations: list[Any] = []
    for title in titles[:rows]:
        collations += ["collation", {"collationQuery": title, "hits": 1}]
    body = {"responseHeader": {"status": 0}, "spellcheck": {"suggestions": [], "collations": collations}}
    return Response(json.dumps(body, ensure_ascii=False), mimetype="application/json")
