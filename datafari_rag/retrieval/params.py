"""What retrieval reads of a configuration, as one small value built once per configuration (the
pipeline's, a workflow's own): retrievers take it instead of the whole ``Settings``, and the
semantic cache scopes its results by it, so the scope is exactly what decides the results."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..config import Settings
from ..filters import SourceFilter
from ..registry import returns_documents

MEMORY_DOCUMENTS = 20  # the evaluation's in-memory runs: documents chunked and embedded per query


@dataclass(frozen=True)
class RetrievalParams:
    mode: str  # retrieval.method: a retrieval mode of the registry
    max_files: int  # chunking.maxFiles: documents a mode that returns documents keeps
    top_k: int  # solr.topK: chunks a mode that returns passages keeps
    hybrid_depth: int  # rrf.topK: how deep each arm of the hybrid goes
    rank_constant: int  # rrf.rankConstant
    fusion: str  # hybrid.fusion: rrf | normalized
    weights: tuple[float, float]  # (BM25, kNN) of the hybrid
    weights_fr: tuple[float, float]  # the same for a question in French
    operator: str  # rag.operator: BM25's q.op
    text_field: str  # rag.solrField: a BM25 document's text
    hl_fragsize: int  # rag.hl.fragsize
    query_model: str  # the model store entry that embeds queries
    vector_field: str  # solr.vector.field
    chunk_size: int  # chunking.chunk.size: the in-memory mode's chunks
    in_memory_chunks: int  # inMemory.maxChunks: the chunks the in-memory mode keeps
    # retrieval.filters: every search narrowed by it (a context's restrict holds it: not compared)
    base_filter: SourceFilter = field(compare=False)

    @classmethod
    def of(cls, settings: Settings) -> RetrievalParams:
        return cls(
            mode=settings.retrieval,
            max_files=settings.max_files,
            top_k=settings.solr_top_k,
            hybrid_depth=settings.rrf_top_k,
            rank_constant=settings.rrf_rank_constant,
            fusion=settings.hybrid_fusion,
            weights=(settings.rrf_weight_bm25, settings.rrf_weight_vector),
            weights_fr=(settings.rrf_weight_bm25_fr, settings.rrf_weight_vector_fr),
            operator=settings.rag_operator,
            text_field=settings.rag_solr_field,
            hl_fragsize=settings.rag_hl_fragsize,
            query_model=settings.query_model,
            vector_field=settings.vector_field,
            chunk_size=settings.chunk_size,
            in_memory_chunks=settings.in_memory_max_chunks,
            base_filter=settings.base_filter,
        )

    @property
    def kept(self) -> int:
        """How many passages a query keeps: ``chunking.maxFiles`` documents for a mode that returns
        documents (bm25), ``solr.topK`` chunks else."""
        if self.mode == "memory":
            return self.in_memory_chunks
        return self.max_files if returns_documents(self.mode) else self.top_k

    def at_least(self, n: int) -> RetrievalParams:
        """Parameters that retrieve at least ``n`` passages (reranking's pool); what is kept
        afterwards is cut back to the usual count by the caller."""
        return replace(self, top_k=max(self.top_k, n), max_files=max(self.max_files, n))

    def deep(self, mode: str, depth: int) -> RetrievalParams:
        """One mode, ``depth`` deep, on documents' whole text (the evaluation's runs); the in-memory
        mode embeds the chunks of ``MEMORY_DOCUMENTS`` BM25 documents at most (each query pays it)."""
        documents = min(depth, MEMORY_DOCUMENTS) if mode == "memory" else depth
        return replace(
            self,
            mode=mode,
            hybrid_depth=depth,
            top_k=depth,
            max_files=documents,
            in_memory_chunks=depth,
            text_field="exactContent",
        )
