"""One Solr collection and the verbs the product uses on it: add, delete, commit, get, scan, search.

Every write to FileShare or VectorMain, and every read, goes through a :class:`Collection`; the
searches go through :mod:`.search`, which adds the ACL filter. Reads for the indexer's own
bookkeeping (``get``, ``scan``, ``facet``) are made with :meth:`UserAccess.indexer`, the only
unrestricted access, which no request handler builds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..security.acl import UserAccess
from .client import SolrClient
from .search import secured_search

WRITE_TIMEOUT = 300.0  # seconds: an update that embeds its chunks in Solr's chain takes a while
TERMS_BATCH = 500  # clauses of one delete (Solr's maxBooleanClauses is 1024)


def local_param(value: str) -> str:
    """``value`` as a quoted local-parameter value, which Solr's parser reads back exactly
    (backslash escapes), whatever it holds: quotes, braces, ``$``, query syntax, any character."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def term_query(field: str, value: str, also: str | None = None) -> str:
    """The documents whose ``field`` holds exactly ``value`` (``{!term}``, no query syntax), and,
    with ``also``, that match that query of the product's own too."""
    term = "{!term f=" + field + " v=" + local_param(value) + "}"
    return term if also is None else "{!bool filter=" + local_param(term) + " filter=" + local_param(also) + "}"


@dataclass(frozen=True)
class Collection:
    solr: SolrClient
    name: str

    # --- writes -----------------------------------------------------------------------------------

    def _update(
        self, body: Any, commit: bool, within: int | None, timeout: float, versions: bool = False
    ) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if commit:
            params["commit"] = "true"
        if within is not None:
            params["commitWithin"] = within
        if versions:
            params["versions"] = "true"
        return self.solr.post(f"{self.name}/update", json=body, params=params, timeout=timeout)

    def add(
        self,
        docs: list[dict[str, Any]],
        commit: bool = False,
        within: int | None = None,
        timeout: float = WRITE_TIMEOUT,
    ) -> dict[str, int]:
        """Adds (or replaces) documents; Solr refuses the whole batch if one document is bad.
        Returns each document's new ``_version_`` by id."""
        adds = self._update(docs, commit, within, timeout, versions=True).get("adds") or []
        return {str(adds[i]): int(adds[i + 1]) for i in range(0, len(adds) - 1, 2)}

    def delete_ids(self, ids: list[str], commit: bool = False) -> None:
        if ids:
            self._update({"delete": ids}, commit, None, WRITE_TIMEOUT)

    def delete_query(self, query: str, commit: bool = False) -> None:
        """Deletes what a query (standard parser) matches: only for queries the product composes."""
        self._update({"delete": {"query": query}}, commit, None, WRITE_TIMEOUT)

    def delete_by_terms(
        self, field: str, values: Iterable[str], commit: bool = False, also: Mapping[str, str] | None = None
    ) -> None:
        """Deletes the documents whose ``field`` holds one of ``values``, each matched as an exact
        term, and, for a value with an ``also`` query, only those that match it too. Deletes by
        query, so documents added but not yet committed are deleted as well (Solr's semantics)."""
        values = list(values)
        for start in range(0, len(values), TERMS_BATCH):
            clauses = [term_query(field, v, (also or {}).get(v)) for v in values[start : start + TERMS_BATCH]]
            query = "{!bool " + " ".join("should=" + local_param(c) for c in clauses) + "}"
            self.delete_query(query, commit and start + TERMS_BATCH >= len(values))

    def commit(self) -> None:
        self._update({"commit": {}}, False, None, WRITE_TIMEOUT)

    # --- reads -----------------------------------------------------------------------------------

    def search(self, handler: str, params: Any, access: UserAccess, timeout: float | None = None) -> dict[str, Any]:
        """A search restricted to what ``access`` may read (see :mod:`.search`)."""
        return secured_search(self.solr, self.name, handler, params, access, timeout)

    def version(self, timeout: float | None = None) -> tuple[int, int]:
        """(documents, highest ``_version_``): it changes with every add, update or delete that
        searches can see. Only counts and a version number are read."""
        params = [("q", "*:*"), ("defType", "lucene"), ("rows", 1), ("fl", "_version_"), ("sort", "_version_ desc")]
        found = self.search("select", params, UserAccess.indexer(), timeout)["response"]
        docs = found["docs"]
        return int(found["numFound"]), int(docs[0]["_version_"]) if docs else 0

    def count(self, query: str = "*:*", timeout: float | None = None) -> int:
        params = [("q", query), ("defType", "lucene"), ("rows", 0)]
        return int(self.search("select", params, UserAccess.indexer(), timeout)["response"]["numFound"])

    def get(self, ids: list[str], fields: str, shards: list[str] | None = None) -> list[dict[str, Any]]:
        """Documents by id, committed or not (real-time get), read as the indexer.

        ``shards`` (from :func:`admin.shard_names`): for a collection routed on a field
        (VectorMain, on ``parent_doc``), whose ids do not tell their shard. The get names the
        shards rather than passing ``_route_``: a real-time get whose ``_route_`` differs from the
        id makes Solr open a new real-time searcher, hence flush a segment, on every call
        (RealTimeGetComponent, SOLR-15064).
        """
        if not ids:
            return []
        params = [*(("id", i) for i in ids), ("fl", fields)]  # repeated id: ids may hold commas
        if shards:
            params.append(("shards", ",".join(shards)))
        found = self.search("get", params, UserAccess.indexer(), timeout=120)
        if "doc" in found:  # Solr answers a single id with {"doc": …}
            return [found["doc"]] if found["doc"] else []
        return list(found.get("response", {}).get("docs", []))

    def scan(self, query: str, fields: str, page: int = 1000) -> Iterator[dict[str, Any]]:
        """Every document matching ``query`` (standard parser), paged with a cursor, as the indexer."""
        cursor = "*"
        while True:
            params = [
                ("q", query),
                ("defType", "lucene"),
                ("fl", fields),
                ("rows", page),
                ("sort", "id asc"),
                ("cursorMark", cursor),
            ]
            found = self.search("select", params, UserAccess.indexer())
            yield from found["response"]["docs"]
            if found.get("nextCursorMark") in (None, cursor):
                return
            cursor = found["nextCursorMark"]

    def facet(self, facet: dict[str, Any], query: str = "*:*") -> dict[str, Any]:
        """A JSON facet over the whole collection, as the indexer."""
        params = [("q", query), ("defType", "lucene"), ("rows", 0), ("json.facet", json.dumps(facet))]
        return dict(self.search("select", params, UserAccess.indexer(), timeout=300).get("facets", {}))
