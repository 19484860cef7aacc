"""Chooses the retriever from ``retrieval.method``; RAG by document restricts it to one id."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from .. import chunk_fields
from ..llm import Usage
from ..registry import returns_documents
from .base import RetrievalContext, Snippet, to_snippet
from .bm25 import bm25
from .cache import scope
from .hybrid import reciprocal_rank_fusion, rrf
from .memory import memory
from .rerank import Reranker
from .vector import vector, vector_chunks

# each retrieval mode of the registry (registry.RETRIEVAL_MODES), by its name
RETRIEVERS: dict[str, Callable[[RetrievalContext, str], list[Snippet]]] = {
    "bm25": bm25,
    "vector": vector,
    "rrf": rrf,
    "memory": memory,
}


def retrieve(ctx: RetrievalContext, query: str) -> list[Snippet]:
    return RETRIEVERS[ctx.params.mode](ctx, query)


@dataclass(frozen=True)
class Found:
    snippets: list[Snippet]
    cache_hits: int | None = None  # queries the semantic cache answered (None: no cache)
    rerank_skipped: str | None = None  # why the reranker left the retrieval order, if it did


def retrieve_all(
    ctx: RetrievalContext,
    queries: list[str],
    question: str | None = None,
    reranker: Reranker | None = None,
    usage: Usage | None = None,
    min_votes: int = 1,
) -> Found:
    """Several queries (sub-queries): each retrieved (through the semantic cache when it is on),
    the lists fused by reciprocal rank, each passage once, as many as one query would bring
    (``chunking.maxFiles`` documents for bm25, ``solr.topK`` chunks otherwise). With a
    ``reranker``, retrieval goes ``rerank.topN`` deep and the passages are reranked against
    ``question`` (default: the first query) before that cut. With ``min_votes`` > 1 (multi-query's
    score filter), a passage must be in that many of the lists, unless none is."""
    keep = ctx.params.kept
    if reranker is not None:  # reranking chooses among at least rerank.topN
        ctx = replace(ctx, params=ctx.params.at_least(reranker.top_n))
    hits: int | None = None if ctx.cache is None else 0
    rankings: list[list[Snippet]] = []
    for query in queries:
        if ctx.cache is None:
            rankings.append(retrieve(ctx, query))
            continue
        found, hit = ctx.cache.get(scope(ctx), query, partial(retrieve, ctx, query))
        rankings.append(found)
        hits = (hits or 0) + hit
    if len(rankings) == 1:
        snippets = rankings[0]
    else:
        by_key = {(x.id, x.content): x for ranking in rankings for x in ranking}
        keys = [[(x.id, x.content) for x in r] for r in rankings]
        fused = reciprocal_rank_fusion(keys, ctx.params.rank_constant)
        if min_votes > 1:
            votes = Counter(key for ranking in keys for key in set(ranking))
            fused = [item for item in fused if votes[item[0]] >= min_votes] or fused
        snippets = [replace(by_key[key], score=score) for key, score in fused[: ctx.params.kept]]
    if reranker is None:
        return Found(snippets[:keep], hits)
    reranked = reranker.rerank(question or queries[0], snippets, usage)
    return Found(reranked.snippets[:keep], hits, reranked.skipped)


def retrieve_document(
    ctx: RetrievalContext, doc_id: str, query: str | None, mode: str | None = None
) -> list[Snippet] | None:
    """The passages of one document, or None when it does not exist *or* may not be read.

    Both cases answer the same, so an id reveals nothing about documents the user cannot see.
    Without a query, or with a retrieval ``mode`` (default: the settings') that returns documents,
    the whole document; else its chunks nearest to the query.
    """
    params = [
        ("q", "*:*"),
        ("defType", "lucene"),
        ("fq", "{!term f=id v=$docid}"),
        ("docid", doc_id),
        ("rows", 1),
        ("fl", "id,title,url,exactContent"),
        *ctx.restrict.main_params(),
    ]
    docs = ctx.main.search("select", params, ctx.access)["response"]["docs"]
    if not docs:
        return None
    whole = to_snippet(docs[0], "exactContent")
    whole_doc = [whole] if whole.content.strip() else []
    if not query or returns_documents(mode or ctx.params.mode):
        return whole_doc
    restrict = [("fq", f"{{!term f={chunk_fields.PARENT} v=$docid}}"), ("docid", doc_id)]
    return vector_chunks(ctx, query, ctx.params.top_k, restrict) or whole_doc
