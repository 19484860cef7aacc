"""The parameters of ``GET search/select`` as DatafariUI sends them, parsed into what Solr may see.

DatafariUI's search page asks for facets (``facet.field={!ex=tag}author``,
``facet.query={!key=id_0}last_modified:[NOW/DAY TO NOW]``, ``facet.range`` with per-field
``f.<field>.facet.range.*``), filters for the facets a user clicked (``fq={!tag=author}(author:"x")``)
and highlighting. Every value is checked here: local parameters only in the three forms the UI
uses (``tag``, ``ex``, ``key``, each with a plain name), never ``{!…}`` or ``_query_`` inside a
query, field names only where a field is expected, options from their known values. A client filter
can only narrow a search: the ACL filters (the sidecar's and Solr's appended one) carry no tag, so
no ``ex`` can exclude them, and facets count only what the user may read — with
``facet.mincount`` at least 1, as a field facet with 0 would list every value of the index.

:func:`echo` gives Solr's ``responseHeader.params`` for the client's own parameters (never the ACL
ones), which DatafariUI reads (``responseHeader.params.rows``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from werkzeug.datastructures import MultiDict

from ..errors import DatafariError
from ..retrieval.bm25 import highlighting as passage_highlighting
from .contract import Param
from .validation import FIELD_NAME, bounded_int, names_acl_field

TAG = re.compile(r"^[A-Za-z0-9_\-.]{1,100}$")
LOCAL = re.compile(r"^\{!([^{}]*)\}(.*)$", re.S)
PLAIN_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DATE_MATH = re.compile(r"^[0-9A-Za-z:.+\-/*]{1,100}$")
PER_FIELD = re.compile(r"^f\.([A-Za-z_][A-Za-z0-9_]*)\.((?:facet|hl)\.[a-z.]+)$")
MAX_VALUES = 100  # facets or filters of one kind in one request

# The parameters a client may repeat, and the local-parameter keys each accepts.
REPEATABLE = {"fq": {"tag"}, "facet.field": {"ex", "key"}, "facet.query": {"ex", "key"}, "facet.range": {"ex", "key"}}
BOOLEAN = ("true", "false", "on", "off")


def _bad(reason: str) -> DatafariError:
    return DatafariError("ragBadRequest", reason)


def _choice(*allowed: str) -> Callable[[str, str], str]:
    def check(name: str, value: str) -> str:
        if value not in allowed:
            raise _bad(f"'{name}' must be one of {', '.join(allowed)}.")
        return value

    return check


def _integer(low: int, high: int) -> Callable[[str, str], str]:
    return lambda name, value: str(bounded_int(value, name, low, high, 0))


def _date_math(name: str, value: str) -> str:
    if not DATE_MATH.match(value):
        raise _bad(f"'{name}' must be a date, a number or Solr date math (NOW/DAY-7DAY…).")
    return value


def _text(name: str, value: str) -> str:
    return query(name, value, 200)


# Facet and highlighting options, global or per field (f.<field>.<option>).
OPTIONS: dict[str, Callable[[str, str], str]] = {
    # at least 1: a field facet with mincount 0 lists every value of the index, those of
    # documents the user may not read included
    "facet.mincount": _integer(1, 1_000_000_000),
    "facet.limit": _integer(-1, 10_000),
    "facet.offset": _integer(0, 1_000_000),
    "facet.sort": _choice("count", "index"),
    "facet.missing": _choice(*BOOLEAN),
    "facet.method": _choice("enum", "fc", "fcs"),
    "facet.prefix": _text,
    "facet.range.start": _date_math,
    "facet.range.end": _date_math,
    "facet.range.gap": _date_math,
    "facet.range.hardened": _choice(*BOOLEAN),
    "facet.range.include": _choice("lower", "upper", "edge", "outer", "all"),
    "facet.range.other": _choice("before", "after", "between", "none", "all"),
    "facet.range.method": _choice("filter", "dv"),
    "hl.snippets": _integer(1, 10),
    "hl.fragsize": _integer(0, 5_000),
}
GLOBAL = ("facet", "hl", "hl.fl", "aggregator")
# Highlighting as Datafari's search page shows it: one passage of 200 characters of the stored
# text, matches in <span class="em">, the text HTML-escaped.
HIGHLIGHTING = {**passage_highlighting(200, '<span class="em">', "</span>"), "hl.encoder": "html"}


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
    """A query in Solr's standard syntax with no local parameters anywhere in it, naming no ACL field."""
    lowered = value.replace("\\", "").lower()
    if "{!" in lowered or "_query_" in lowered or "_val_" in lowered:
        raise _bad(f"'{name}' may not contain local parameters.")
    if names_acl_field(value):
        raise _bad(f"'{name}' may not name an access-control field.")
    if not value.strip() or len(value) > max_length:
        raise _bad(f"'{name}' must be a query of 1 to {max_length} characters.")
    return value


def field(name: str, value: str) -> str:
    """A plain field name that is not one of the ACL fields."""
    if not PLAIN_FIELD.match(value) or names_acl_field(value):
        raise _bad(f"'{name}' must name a field (not an access-control field).")
    return value


def _local(name: str, value: str) -> tuple[str, str]:
    """Splits ``{!k=v …}rest``; only the keys ``name`` accepts, each with a plain value."""
    found = LOCAL.match(value)
    if not found:
        return "", value
    pairs = found.group(1).split()
    allowed = REPEATABLE[name]
    prefix = []
    for pair in pairs:
        key, _, tag = pair.partition("=")
        if key not in allowed or not all(TAG.match(t) for t in tag.split(",")):
            keys = " or ".join(f"{k}=<name>" for k in sorted(allowed))
            raise _bad(f"'{name}' accepts only the local parameters {keys}.")
        prefix.append(f"{key}={tag}")
    return "{!" + " ".join(prefix) + "}", found.group(2)


def facets_and_filters(args: MultiDict[str, str], max_query_length: int) -> list[tuple[str, str]]:
    """The client's filters, facets and highlighting options, checked, as Solr parameters."""
    out: list[tuple[str, str]] = []
    faceted: list[str] = []
    for name in REPEATABLE:
        values = args.getlist(name)
        if len(values) > MAX_VALUES:
            raise _bad(f"'{name}' may be given at most {MAX_VALUES} times.")
        for value in values:
            prefix, rest = _local(name, value)
            if name in ("facet.field", "facet.range"):
                out.append((name, prefix + field(name, rest)))
                if name == "facet.field":
                    faceted.append(rest)
            else:
                out.append((name, prefix + query(name, rest, max_query_length)))
    for name, value in args.items(multi=False):
        per_field = PER_FIELD.match(name)
        if name in OPTIONS:
            out.append((name, OPTIONS[name](name, value)))
        elif per_field and per_field.group(2) in OPTIONS:
            field(name, per_field.group(1))
            out.append((name, OPTIONS[per_field.group(2)](name, value)))
        elif name == "facet":
            out.append((name, _choice(*BOOLEAN)(name, value)))
    if "facet.mincount" not in args:  # field facets only: range buckets hold no value of a document
        out += [(f"f.{f}.facet.mincount", "1") for f in dict.fromkeys(faceted) if f"f.{f}.facet.mincount" not in args]
    return out


def highlighting(args: MultiDict[str, str]) -> list[tuple[str, str]]:
    """Datafari's highlighting unless the client turned it off (its ``hl.snippets`` and
    ``hl.fragsize`` come through :func:`facets_and_filters`); ``hl.fl`` names stored fields."""
    if args.get("hl", "true") not in BOOLEAN:
        raise _bad("'hl' must be true or false.")
    if args.get("hl", "true") in ("false", "off"):
        return []
    params = {k: v for k, v in HIGHLIGHTING.items() if k not in args}
    params["hl"] = "true"
    if "hl.fl" in args:
        fields = [f.strip() for f in args["hl.fl"].split(",") if f.strip()]
        if not fields or len(fields) > 10 or not all(FIELD_NAME.match(f) and not names_acl_field(f) for f in fields):
            raise _bad("'hl.fl' must be a comma-separated list of at most 10 field names.")
        params["hl.fl"] = ",".join(fields)
    return list(params.items())


def aggregator(value: str | None) -> None:
    """Datafari's federated search: this product searches one index, the local one."""
    names_ = [v.strip() for v in (value or "").split(",") if v.strip()]
    if any(n != "local" for n in names_):
        raise _bad("'aggregator' may only name the local index ('local', or empty for all).")


def echo(args: MultiDict[str, str]) -> dict[str, str | list[str]]:
    """``responseHeader.params`` as Solr echoes explicit parameters: a list for a repeated one."""
    return {k: (v[0] if len(v) == 1 else v) for k, v in args.lists()}
