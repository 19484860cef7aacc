"""The parameters of ``GET search/select`` as DatafariUI sends them, handed to Solr's door.

DatafariUI's search page asks for facets (``facet.field={!ex=tag}author``,
``facet.query={!key=id_0}last_modified:[NOW/DAY TO NOW]``, ``facet.range`` with per-field
``f.<field>.facet.range.*``), filters for the facets a user clicked (``fq={!tag=author}(author:"x")``)
and highlighting. This module decides which of them the sidecar's API takes (the names, how many
of each) and passes their values to Solr as the user's own (:func:`..solr.search.from_user`):
what a filter or a facet may hold — local parameters only ``tag``, ``ex`` and ``key``, no nested
query, no ACL field, a field facet counted with a ``mincount`` of 1 at least — is judged there, on
the query Solr will run, by the one rule Solr holds its direct clients to (docs/security.md). A
client filter can only narrow a search: the ACL filters (the sidecar's and Solr's appended one)
carry no tag, so no ``ex`` can exclude them.

:func:`echo` gives Solr's ``responseHeader.params`` for the client's own parameters (never the ACL
ones), which DatafariUI reads (``responseHeader.params.rows``).
"""

from __future__ import annotations

import re
from typing import Any

from werkzeug.datastructures import MultiDict

from ...errors import DatafariError
from ...retrieval.bm25 import highlighting as passage_highlighting
from ...solr.search import from_user
from ..http.contract import Param
from ..http.validation import FIELD_NAME

PER_FIELD = re.compile(r"^f\.([A-Za-z_][A-Za-z0-9_]*)\.((?:facet|hl)\.[a-z.]+)$")
MAX_VALUES = 100  # facets or filters of one kind in one request

# The parameters a client may repeat: filters and facets.
REPEATABLE = ("fq", "facet.field", "facet.query", "facet.range")
BOOLEAN = ("true", "false", "on", "off")
# Facet and highlighting options, global or per field (f.<field>.<option>), as DatafariUI sends them
OPTIONS = (
    "facet.mincount",
    "facet.limit",
    "facet.offset",
    "facet.sort",
    "facet.missing",
    "facet.method",
    "facet.prefix",
    "facet.range.start",
    "facet.range.end",
    "facet.range.gap",
    "facet.range.hardened",
    "facet.range.include",
    "facet.range.other",
    "facet.range.method",
    "hl.snippets",
    "hl.fragsize",
)
GLOBAL = ("facet", "hl", "hl.fl", "aggregator")
# Highlighting as Datafari's search page shows it: one passage of 200 characters of the stored
# text, matches in <span class="em">, the text HTML-escaped.
HIGHLIGHTING = {**passage_highlighting(200, '<span class="em">', "</span>"), "hl.encoder": "html"}


def _bad(reason: str) -> DatafariError:
    return DatafariError("ragBadRequest", reason)


def params() -> tuple[Param, ...]:
    """Every parameter this module reads, as documented (per-field options are matched by pattern)."""
    text = {"type": "string", "minLength": 1}
    repeatable = "repeatable; local params: tag, ex, key only"
    return (
        *(Param(name, text, repeatable, repeatable=True) for name in REPEATABLE),
        *(Param(name) for name in (*OPTIONS, *GLOBAL)),
    )


def names() -> set[str]:
    return {p.name for p in params()}


def is_per_field(name: str) -> bool:
    found = PER_FIELD.match(name)
    return found is not None and found.group(2) in OPTIONS


def query(name: str, value: str, max_length: int) -> str:
    """A user's query or filter, 1 to ``max_length`` characters: what it may hold is judged by
    Solr's door when it runs."""
    if not value.strip() or len(value) > max_length:
        raise _bad(f"'{name}' must be a query of 1 to {max_length} characters.")
    return value


def facets_and_filters(args: MultiDict[str, str], max_query_length: int) -> list[tuple[str, Any]]:
    """The client's filters, facets and their options, as the user's own Solr parameters."""
    out: list[tuple[str, Any]] = []
    for name in REPEATABLE:
        values = args.getlist(name)
        if len(values) > MAX_VALUES:
            raise _bad(f"'{name}' may be given at most {MAX_VALUES} times.")
        out += [from_user(name, query(name, value, max_query_length)) for value in values]
    for name, value in args.items(multi=False):
        if name in OPTIONS or is_per_field(name) or name == "facet":
            out.append(from_user(name, value))
    return out


def highlighting(args: MultiDict[str, str]) -> list[tuple[str, Any]]:
    """Datafari's highlighting unless the client turned it off (its ``hl.snippets`` and
    ``hl.fragsize`` come through :func:`facets_and_filters`); ``hl.fl`` names stored fields."""
    if args.get("hl", "true") not in BOOLEAN:
        raise _bad("'hl' must be true or false.")
    if args.get("hl", "true") in ("false", "off"):
        return []
    params: list[tuple[str, Any]] = [(k, v) for k, v in HIGHLIGHTING.items() if k not in args]
    params.append(("hl", "true"))
    if "hl.fl" in args:
        fields = [f.strip() for f in args["hl.fl"].split(",") if f.strip()]
        if not fields or len(fields) > 10 or not all(FIELD_NAME.match(f) for f in fields):
            raise _bad("'hl.fl' must be a comma-separated list of at most 10 field names.")
        params = [p for p in params if p[0] != "hl.fl"]
        params.append(from_user("hl.fl", ",".join(fields)))
    return params


def aggregator(value: str | None) -> None:
    """Datafari's federated search: this product searches one index, the local one."""
    names_ = [v.strip() for v in (value or "").split(",") if v.strip()]
    if any(n != "local" for n in names_):
        raise _bad("'aggregator' may only name the local index ('local', or empty for all).")


def echo(args: MultiDict[str, str]) -> dict[str, str | list[str]]:
    """``responseHeader.params`` as Solr echoes explicit parameters: a list for a repeated one."""
    return {k: (v[0] if len(v) == 1 else v) for k, v in args.lists()}
