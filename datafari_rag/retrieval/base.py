"""What every retriever takes and returns."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from .. import chunk_fields
from ..config import Settings
from ..filters import NO_FILTER, SourceFilter
from ..security import UserAccess
from ..solr import SolrClient
from ..solr.collection import Collection
from .params import RetrievalParams

# Characters with a meaning in Solr's query syntax; a BM25 search uses the words only.
_SOLR_SYNTAX = re.compile(r'[+\-&|!(){}\[\]^"~*?:\\/]')


@dataclass(frozen=True)
class Snippet:
    """A passage found in the index, with the document it comes from."""

    id: str
    title: str
    url: str
    content: str
    score: float = 0.0
    chunk: int | None = None  # chunk_index, for a chunk of VectorMain


class ResultCache(Protocol):
    """What a retriever asks of a cache of results (``cache.py``'s semantic cache): the results of
    ``query`` in the scope ``key``, retrieved by ``retrieve`` when no close query was cached."""

    def get(self, key: Hashable, query: str, retrieve: Callable[[], list[Snippet]]) -> tuple[list[Snippet], bool]: ...


@dataclass(frozen=True)
class RetrievalContext:
    """Where to search (FileShare and VectorMain), how (:class:`RetrievalParams`), as whom."""

    main: Collection
    vectors: Collection
    params: RetrievalParams
    access: UserAccess
    restrict: SourceFilter = NO_FILTER  # Datafari 7.0's ``filters``: sources only among these
    cache: ResultCache | None = None  # cache.enabled: results of close queries in the same scope
    dense: Mapping[str, str] = field(default_factory=dict)  # HyDE: query -> the text kNN embeds instead
    # the chunks' embedding service, for the in-memory mode (Solr embeds for the others)
    embed: Callable[[list[str]], list[list[float]]] | None = None

    def __post_init__(self) -> None:
        # retrieval.filters (a workflow's filters) narrow every search of these settings
        base = self.params.base_filter
        if base.values or base.ranges:
            object.__setattr__(self, "restrict", self.restrict.narrowed(base))

    def knn_text(self, query: str) -> str:
        return self.dense.get(query, query)

    @classmethod
    def of(cls, solr: SolrClient, settings: Settings, access: UserAccess) -> RetrievalContext:
        """The collections the settings name, on ``solr``, searched as they say."""
        main, vectors = Collection(solr, settings.collection_main), Collection(solr, settings.collection_vector)
        return cls(main, vectors, RetrievalParams.of(settings), access)


def words_only(query: str) -> str:
    """The query without Solr syntax, so that BM25 matches words and ``q.op`` decides."""
    return " ".join(_SOLR_SYNTAX.sub(" ", query).split())


def first(value: Any) -> str:
    """A stored field's value as text (Solr returns multivalued fields as lists)."""
    if isinstance(value, list):
        return str(value[0]) if value else ""
    return "" if value is None else str(value)


def to_snippet(doc: dict[str, Any], content_field: str) -> Snippet:
    return Snippet(
        id=first(doc.get(chunk_fields.PARENT)) or first(doc.get("id")),
        title=first(doc.get("title")),
        url=first(doc.get("url")) or first(doc.get(chunk_fields.PARENT)) or first(doc.get("id")),
        content=first(doc.get(content_field)),
        score=float(doc.get("score") or 0.0),
        chunk=_int_or_none(doc.get(chunk_fields.INDEX)),
    )


def _int_or_none(value: Any) -> int | None:
    value = value[0] if isinstance(value, list) and value else value
    return int(value) if isinstance(value, int | float | str) and str(value).lstrip("-").isdigit() else None
