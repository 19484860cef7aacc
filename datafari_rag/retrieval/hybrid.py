"""Hybrid retrieval: BM25 and kNN over VectorMain's chunks, fused by reciprocal rank (RRF)."""

from __future__ import annotations

from collections.abc import Hashable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, TypeVar

from .. import chunk_fields
from ..solr.search import from_user
from ..text.language import detect_question
from .base import RetrievalContext, Snippet, to_snippet, words_only
from .guard import parent_of, readable_parents
from .params import RetrievalParams
from .vector import FIELDS

# kNN arms run here while the request's thread runs BM25; threads start at first use (after a fork)
_POOL = ThreadPoolExecutor(max_workers=16, thread_name_prefix="hybrid-knn")
K = TypeVar("K", bound=Hashable)  # what identifies a result in the lists fused


def reciprocal_rank_fusion(
    rankings: list[list[K]], k: int, weights: list[float] | None = None
) -> list[tuple[K, float]]:
    """score(d) = Σ w_i / (k + rank_i(d)), ranks from 1; best first, ties by first appearance."""
    scores: dict[K, float] = {}
    for i, ranking in enumerate(rankings):
        weight = weights[i] if weights else 1.0
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])


def normalized_fusion(scored: list[list[tuple[K, float]]], weights: list[float]) -> list[tuple[K, float]]:
    """score(d) = Σ w_i · (s_i(d) - min_i) / (max_i - min_i); a list that does not hold d adds 0."""
    scores: dict[K, float] = {}
    for weight, items in zip(weights, scored, strict=True):
        if not items:
            continue
        values = [score for _, score in items]
        low, high = min(values), max(values)
        for key, score in items:
            scaled = (score - low) / (high - low) if high > low else 1.0
            scores[key] = scores.get(key, 0.0) + weight * scaled
    return sorted(scores.items(), key=lambda item: -item[1])


# A French question's BM25 arm over the chunks: French fields first, the English ones adding 0.3 of
# their score (PIAF dev, hybrid nDCG@10 0.811 -> 0.816), the French words unstemmed beside their
# stems (0.822 -> 0.829), a paragraph holding the question's words within 20 positions boosted (pf, ps:
# 0.829 -> 0.830); English questions keep VectorMain's own defaults (the same change lowered SciFact's
# hybrid 0.737 -> 0.734). docs/evaluation.md.
FRENCH_SPARSE = (
    ("qf", "title_en title_fr^2 content_en content_fr^2 content_fr_words^2"),
    ("tie", "0.3"),
    ("pf", "content_fr^3"),
    ("ps", "20"),
)


def weights_for(params: RetrievalParams, language: str | None) -> tuple[float, float]:
    """(BM25 weight, kNN weight) for a question in ``language`` (``detect_question``'s): French
    questions have their own (``rrf.weight.*.fr``)."""
    return params.weights_fr if language == "fr" else params.weights


def rrf(ctx: RetrievalContext, query: str) -> list[Snippet]:
    """BM25 and kNN over VectorMain's chunks, ``rrf.topK`` deep each, run at once and fused
    (``hybrid.fusion``: weighted reciprocal rank, or weighted normalised scores); the chunks of both
    lists go through the parent check together, in one request, before the fusion."""
    p = ctx.params
    depth = p.hybrid_depth
    dense_job = _POOL.submit(_dense, ctx, query, depth)
    language = detect_question(query)  # once: the BM25 arm's fields and the fusion's weights
    sparse = _sparse(ctx, query, depth, french=language == "fr")
    dense = dense_job.result()
    allowed = readable_parents(ctx.main, ctx.access, map(parent_of, sparse + dense))
    rankings = [[to_snippet(d, chunk_fields.TEXT) for d in docs if parent_of(d) in allowed] for docs in (sparse, dense)]
    by_key = {(x.id, x.content): x for ranking in rankings for x in ranking}
    weights = list(weights_for(p, language))
    if p.fusion == "normalized":
        fused = normalized_fusion([[((x.id, x.content), x.score) for x in r] for r in rankings], weights)
    else:
        keys = [[(x.id, x.content) for x in ranking] for ranking in rankings]
        fused = reciprocal_rank_fusion(keys, p.rank_constant, weights)
    return [replace(by_key[key], score=score) for key, score in fused[: p.top_k]]


def _dense(ctx: RetrievalContext, query: str, depth: int) -> list[dict[str, Any]]:
    if not query.strip():
        return []
    knn: list[tuple[str, Any]] = [("queryrag", ctx.knn_text(query))]
    knn += [("model", ctx.params.query_model), ("vectorField", ctx.params.vector_field)]
    knn += [("fl", FIELDS), ("topK", depth), ("rows", depth), *ctx.restrict.vector_params()]
    docs: list[dict[str, Any]] = ctx.vectors.search("vector", knn, ctx.access)["response"]["docs"]
    return docs


def _sparse(ctx: RetrievalContext, query: str, depth: int, french: bool = False) -> list[dict[str, Any]]:
    words = words_only(query)
    if not words:
        return []
    params = [from_user("q", words), ("q.op", ctx.params.operator), ("rows", depth), ("fl", FIELDS)]
    language = FRENCH_SPARSE if french else ()
    params += [("defType", "edismax"), *language, *ctx.restrict.vector_params()]
    found = ctx.vectors.search("select", params, ctx.access)
    docs: list[dict[str, Any]] = found["response"]["docs"]
    return docs
