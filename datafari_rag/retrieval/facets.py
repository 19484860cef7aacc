"""The values a source filter may take: what the user's readable documents hold, for the
self-querying prompt."""

from __future__ import annotations

from typing import Any

from ..filters import FIELDS, SourceFilter


def known_values(
    main: Any, access: Any, fields: list[str], restrict: SourceFilter, limit: int = 25
) -> dict[str, list[str]]:
    """The most frequent values of ``fields`` among the documents ``access`` may read (a facet
    request on FileShare, with the user's filter: a value is information too)."""
    terms = [f for f in fields if f in FIELDS and f != "id"]
    if not terms:
        return {}
    params: list[tuple[str, Any]] = [("q", "*:*"), ("defType", "lucene"), ("rows", 0), ("facet", "true")]
    params += [("facet.limit", limit), ("facet.mincount", 1), *restrict.main_params()]
    params += [("facet.field", FIELDS[f][0]) for f in terms]
    counts = main.search("select", params, access).get("facet_counts", {}).get("facet_fields", {})
    return {f: [str(v) for v in counts.get(FIELDS[f][0], [])[::2]] for f in terms}
