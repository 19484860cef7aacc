"""Hybrid retrieval: BM25 and kNN over VectorMain's chunks, fused by reciprocal rank (RRF)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import replace
from typing import Any

from .base import RetrievalContext, Snippet, to_snippet, words_only
from .guard import parent_of, readable_parents
from .vector import FIELDS


def reciprocal_rank_fusion(rankings: list[list[Hashable]], k: int) -> list[tuple[Hashable, float]]:
    """score(d) = Σ 1 / (k + rank(d)), ranks from 1; best first, ties by first appearance."""
    scores: dict[Hashable, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])


def rrf(ctx: RetrievalContext, query: str) -> list[Snippet]:
    """BM25 and kNN over VectorMain's chunks, ``rrf.topK`` deep each, fused; the chunks of both lists
    go through the parent check together, in one request, before the fusion."""
    s = ctx.settings
    depth = s.rrf_top_k
    dense: list[dict[str, Any]] = []
    if query.strip():
        knn = [("queryrag", query), ("model", s.embeddings_model), ("vectorField", s.vector_field)]
        knn += [("fl", FIELDS), ("topK", depth), ("rows", depth), *ctx.restrict.vector_params()]
        dense = ctx.vectors.search("vector", knn, ctx.access)["response"]["docs"]
    sparse: list[dict[str, Any]] = []
    words = words_only(query)
    if words:
        params = {"q": words, "q.op": s.rag_operator, "rows": depth, "fl": FIELDS, "defType": "edismax"}
        found = ctx.vectors.search("select", [*params.items(), *ctx.restrict.vector_params()], ctx.access)
        sparse = found["response"]["docs"]
    allowed = readable_parents(ctx.main, ctx.access, map(parent_of, sparse + dense))
    rankings = [
        [to_snippet(d, "embedded_content") for d in docs if parent_of(d) in allowed] for docs in (sparse, dense)
    ]
    by_key = {(x.id, x.content): x for ranking in rankings for x in ranking}
    fused = reciprocal_rank_fusion([[(x.id, x.content) for x in ranking] for ranking in rankings], s.rrf_rank_constant)
    return [replace(by_key[key], score=score) for key, score in fused[: s.solr_top_k]]
