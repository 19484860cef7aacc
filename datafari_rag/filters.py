"""Restricting retrieval to some documents: Datafari 7.0's ``filters`` (``{"id": [...],
"extension": ["pdf"]}``), as Solr filters on both collections.

A value type of the ground floor: the settings check ``retrieval.filters`` with it, the API
a request's ``filters``, retrieval applies it (``retrieval/facets.py`` reads the values to offer).
Only whitelisted fields may be filtered, each on the name it has in FileShare and in VectorMain
(a parent's ``id`` is its chunks' ``parent_doc``; the other fields are copied to every chunk).
Values travel as parameters of Solr's ``terms`` parser, never inside query syntax. A filter only
narrows what the user may read: the ACL filters stay.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from . import chunk_fields

# field a client names -> (its FileShare name, its VectorMain name)
FIELDS = {
    "id": ("id", chunk_fields.PARENT),
    "extension": ("extension", "extension"),
    "source": ("source", "source"),
    "repo_source": ("repo_source", "repo_source"),
    "language": ("language", "language"),
    "author": ("author", "author"),
    "type_category": ("type_category", "type_category"),
}
DATE_FIELDS = ("last_modified",)  # date fields a range may restrict (same name on both sides)
SEPARATOR = "\u001f"  # never in a value: values with control characters are refused
MAX_VALUES = 1000


@dataclass(frozen=True)
class SourceFilter:
    """Field -> the values a source must hold one of (an empty filter restricts nothing), and
    date field -> (from, to), each a datetime or None (open)."""

    values: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ranges: dict[str, tuple[datetime | None, datetime | None]] = field(default_factory=dict)

    def main_params(self) -> list[tuple[str, Any]]:
        return self._params(0)

    def vector_params(self) -> list[tuple[str, Any]]:
        return self._params(1)

    def narrowed(self, other: SourceFilter) -> SourceFilter:
        """Sources that pass both filters (a field in both keeps the values common to both)."""
        values = dict(self.values)
        for name, more in other.values.items():
            values[name] = tuple(v for v in values[name] if v in more) if name in values else more
        return SourceFilter(values, {**self.ranges, **other.ranges})

    def _params(self, side: int) -> list[tuple[str, Any]]:
        params: list[tuple[str, Any]] = []
        for i, (name, values) in enumerate(sorted(self.values.items())):
            if not values:  # nothing can match (two filters with no value in common)
                params.append(("fq", "-*:*"))
                continue
            solr_field = FIELDS[name][side]
            params += [
                ("fq", f"{{!terms f={solr_field} separator=$filter_sep v=$filter_{i}}}"),
                (f"filter_{i}", SEPARATOR.join(values)),
            ]
        for name, (low, high) in sorted(self.ranges.items()):
            assert name in DATE_FIELDS
            params.append(("fq", f"{name}:[{_solr_date(low)} TO {_solr_date(high)}]"))
        return [*params, ("filter_sep", SEPARATOR)] if self.values else params


def _solr_date(moment: datetime | None) -> str:
    """A datetime in Solr's syntax (UTC, second precision), or * for an open end: built from the
    datetime, never from text."""
    if moment is None:
        return "*"
    utc = moment.astimezone(UTC) if moment.tzinfo else moment
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ")


NO_FILTER = SourceFilter()


def source_filter(value: Any) -> SourceFilter:
    """``filters`` from a request body; raises ValueError saying what is wrong."""
    if value is None:
        return NO_FILTER
    if not isinstance(value, dict):
        raise ValueError("'filters' must be an object of field -> list of values")
    unknown = sorted(set(value) - set(FIELDS))
    if unknown:
        raise ValueError(f"'filters' may name only {', '.join(FIELDS)} (not {', '.join(unknown)})")
    checked: dict[str, tuple[str, ...]] = {}
    for name, values in value.items():
        if not isinstance(values, list) or not 1 <= len(values) <= MAX_VALUES:
            raise ValueError(f"'filters.{name}' must be a list of 1 to {MAX_VALUES} values")
        if not all(isinstance(v, str) and v.strip() and v.isprintable() and len(v) <= 2048 for v in values):
            raise ValueError(f"'filters.{name}' values must be non-empty printable strings")
        checked[name] = tuple(dict.fromkeys(values))
    return SourceFilter(checked)
