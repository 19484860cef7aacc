"""BM25 retrieval: FileShare ``/select`` with ``q.op`` = ``rag.operator``, whole documents."""

from __future__ import annotations

from .base import RetrievalContext, Snippet, to_snippet, words_only

FIELDS = "id,title,url,exactContent,score"


def bm25_documents(ctx: RetrievalContext, query: str, rows: int) -> list[Snippet]:
    words = words_only(query)
    if not words:
        return []
    params = {"q": words, "q.op": ctx.settings.rag_operator, "rows": rows, "fl": FIELDS, "defType": "edismax"}
    found = ctx.main.search("select", [*params.items(), *ctx.restrict.main_params()], ctx.access)
    return [s for s in (to_snippet(d, "exactContent") for d in found["response"]["docs"]) if s.content.strip()]


def bm25(ctx: RetrievalContext, query: str) -> list[Snippet]:
    """The ``chunking.maxFiles`` best documents (their full text, chunked later)."""
    return bm25_documents(ctx, query, ctx.settings.max_files)
