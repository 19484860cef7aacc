"""Vector retrieval: VectorMain ``/vector`` (Solr embeds the query, kNN with ACL pre-filter)."""

from __future__ import annotations

from typing import Any

from .base import RetrievalContext, Snippet, to_snippet

FIELDS = "id,title,url,parent_doc,embedded_content,score"


def vector_chunks(
    ctx: RetrievalContext, query: str, top_k: int, extra: list[tuple[str, Any]] | None = None
) -> list[Snippet]:
    if not query.strip():
        return []
    s = ctx.settings
    params: list[tuple[str, Any]] = [
        ("queryrag", query),
        ("topK", top_k),
        ("rows", top_k),
        ("model", s.embeddings_model),
        ("vectorField", s.vector_field),
        ("fl", FIELDS),
        *(extra or []),
    ]
    found = ctx.vectors.search("vector", params, ctx.access)
    return [to_snippet(d, "embedded_content") for d in found["response"]["docs"]]


def vector(ctx: RetrievalContext, query: str) -> list[Snippet]:
    """The ``solr.topK`` nearest chunks."""
    return vector_chunks(ctx, query, ctx.settings.solr_top_k)
