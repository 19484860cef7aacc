"""Hybrid retrieval: BM25 and kNN over VectorMain's chunks, fused by reciprocal rank (RRF)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import replace

from .base import RetrievalContext, Snippet, to_snippet, words_only
from .vector import vector_chunks

BM25_FIELDS = "id,title,url,parent_doc,embedded_content,score"


def reciprocal_rank_fusion(rankings: list[list[Hashable]], k: int) -> list[tuple[Hashable, float]]:
    """score(d) = Σ 1 / (k + rank(d)), ranks from 1; best first, ties by first appearance."""
    scores: dict[Hashable, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])


def rrf(ctx: RetrievalContext, query: str) -> list[Snippet]:
    s = ctx.settings
    depth = s.rrf_top_k
    dense = vector_chunks(ctx, query, depth)
    sparse: list[Snippet] = []
    words = words_only(query)
    if words:
        params = {"q": words, "q.op": s.rag_operator, "rows": depth, "fl": BM25_FIELDS, "defType": "edismax"}
        docs = ctx.vectors.search("select", params, ctx.access)["response"]["docs"]
        sparse = [to_snippet(d, "embedded_content") for d in docs]
    by_key = {(x.id, x.content): x for x in sparse + dense}
    fused = reciprocal_rank_fusion(
        [[(x.id, x.content) for x in ranking] for ranking in (sparse, dense)], s.rrf_rank_constant
    )
    return [replace(by_key[key], score=score) for key, score in fused[: s.solr_top_k]]
