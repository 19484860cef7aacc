"""What query rewriting and query enhancement read of a configuration, as one small value built
once per pipeline (per workflow): the stages take it instead of the whole ``Settings``."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Settings
from ..registry import returns_documents
from .hygiene import Hygiene


@dataclass(frozen=True)
class QueryParams:
    documents: bool  # the retrieval mode returns whole documents (bm25): its rewriting prompt, no kNN
    rewrite: bool  # chat.query.rewriting.enabled.<bm25|vector>, the one of the retrieval mode
    sub_queries: int  # chat.query.rewriting.subQueries (0: off)
    hygiene: Hygiene  # prompt.cleaning, prompt.stripAccents
    history_size: int  # chat.memory.size
    multi_query: int  # query.multiQuery.count (0: off)
    multi_query_min_votes: int  # query.multiQuery.minVotes
    hyde: bool  # query.hyde.enabled
    self_query_fields: tuple[str, ...]  # query.selfQuery.fields (none: off)

    @classmethod
    def of(cls, settings: Settings, mode: str | None = None) -> QueryParams:
        """``mode``: a retrieval mode other than the settings' (the evaluation runs each)."""
        documents = returns_documents(mode or settings.retrieval)
        return cls(
            documents=documents,
            rewrite=settings.rewriting_bm25 if documents else settings.rewriting_vector,
            sub_queries=settings.sub_queries,
            hygiene=Hygiene.of(settings),
            history_size=settings.chat_history_size,
            multi_query=settings.query_multi_query,
            multi_query_min_votes=settings.query_multi_query_min_votes,
            hyde=settings.query_hyde,
            self_query_fields=tuple(settings.self_query_fields),
        )

    @property
    def enhancing(self) -> bool:
        """Whether any query enhancer is on."""
        return bool(self.multi_query or self.hyde or self.self_query_fields)
