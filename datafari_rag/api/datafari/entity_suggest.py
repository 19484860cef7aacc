"""``GET v1.0/search/suggestEntityAuthors``: DatafariUI's entity autocomplete for people — the
authors of the documents the user may read whose name starts with the last word typed, as Solr's
suggester answers (``{"suggest": {"suggesterEntityAuthors": {"<word>": {"numFound",
"suggestions": [{"term", "weight", "payload"}]}}}}``).

The names come from a facet on ``author`` under the user's filter, so a name that appears only on
documents the user may not read is never offered."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request

from ...solr import SolrError
from ..http.answers import Error
from ..http.auth import current_access
from ..http.context import get_services
from ..http.contract import REFUSALS, endpoint, json, refusals
from ..http.validation import bounded_int
from . import search_params
from .search import MAX_SUGGESTIONS, SUGGEST, SUGGEST_PARAMS, only_params, solr_failure

bp = Blueprint("entity_suggest", __name__)

DICTIONARY = "suggesterEntityAuthors"  # DatafariUI's ui-config.json names it so
FIELD = "author"


def authors(typed: str, rows: int) -> list[tuple[str, int]]:
    """The readable documents' authors starting with ``typed`` (any case), the most frequent first."""
    params: list[tuple[str, Any]] = [
        ("q", "*:*"),
        ("defType", "lucene"),
        ("rows", 0),
        ("facet", "true"),
        ("facet.field", FIELD),
        ("facet.contains", typed),
        ("facet.contains.ignoreCase", "true"),
        ("facet.mincount", 1),
        ("facet.limit", 200),
        ("hl", "false"),
    ]
    found = get_services().main.search("select", params, current_access())
    flat = found.get("facet_counts", {}).get("facet_fields", {}).get(FIELD, [])
    pairs = [(str(flat[i]), int(flat[i + 1])) for i in range(0, len(flat) - 1, 2)]
    return [p for p in pairs if p[0].lower().startswith(typed.lower())][:rows]


@bp.get("/search/suggestEntityAuthors")
@endpoint(
    "DatafariUI's people autocomplete: authors of readable documents starting with the last word typed",
    {
        200: json({"oneOf": [{"type": "object", "required": ["suggest"]}, Error]}, "Solr's suggester answer"),
        **refusals(*REFUSALS),
    },
    params=SUGGEST,
)
def suggest_entity_authors() -> Response:
    only_params(SUGGEST_PARAMS)
    search_params.aggregator(request.args.get("aggregator"))
    rows = bounded_int(request.args.get("rows"), "rows", 1, MAX_SUGGESTIONS, MAX_SUGGESTIONS)
    typed = request.args.get("q", "")
    word = typed.strip().split()[-1] if typed.strip() else ""
    names: list[tuple[str, int]] = []
    if word:
        search_params.query("q", word, 200)  # its length: a substring of names, never parsed
        try:
            names = authors(word, rows)
        except SolrError as exc:
            raise solr_failure(exc) from exc
    suggestions = [{"term": name, "weight": count, "payload": ""} for name, count in names]
    return jsonify({"suggest": {DICTIONARY: {word: {"numFound": len(suggestions), "suggestions": suggestions}}}})
