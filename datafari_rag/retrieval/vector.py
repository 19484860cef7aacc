"""Vector retrieval: VectorMain ``/vector`` (Solr embeds the query, kNN with ACL pre-filter), then
the parent check (:mod:`.guard`) on what comes back."""

from __future__ import annotations

from typing import Any

from .. import chunk_fields
from ..security import UserAccess
from ..solr.collection import Collection
from .base import RetrievalContext, Snippet, to_snippet
from .guard import readable_chunks

FIELDS = f"id,title,url,{chunk_fields.PARENT},{chunk_fields.INDEX},{chunk_fields.TEXT},score"
MAX_DEPTH = 1000  # the most chunks asked of Solr while looking for top K readable ones


def guarded_knn(
    vectors: Collection,
    main: Collection,
    access: UserAccess,
    params: list[tuple[str, Any]],
    top_k: int,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The ``top_k`` nearest chunks whose parents are readable now, and Solr's last response.
    ``params`` are the ``/vector`` request's own (``queryrag``, ``model``, ``fl`` with
    ``parent_doc``…); Solr is asked for twice as many, and again for more while chunks were
    dropped and Solr had more to give."""
    depth = min(MAX_DEPTH, top_k * 2)
    while True:
        response = vectors.search("vector", [*params, ("topK", depth), ("rows", depth)], access)
        found = response["response"]["docs"]
        kept = readable_chunks(main, access, found)
        if len(kept) >= top_k or len(found) < depth or depth >= MAX_DEPTH:
            return kept[:top_k], response
        depth = min(MAX_DEPTH, depth * 4)


def vector_chunks(
    ctx: RetrievalContext, query: str, top_k: int, extra: list[tuple[str, Any]] | None = None
) -> list[Snippet]:
    if not query.strip():
        return []
    params: list[tuple[str, Any]] = [
        ("queryrag", ctx.knn_text(query)),
        ("model", ctx.params.query_model),
        ("vectorField", ctx.params.vector_field),
        ("fl", FIELDS),
        *(extra or []),
        *ctx.restrict.vector_params(),
    ]
    docs, _ = guarded_knn(ctx.vectors, ctx.main, ctx.access, params, top_k)
    return [to_snippet(d, chunk_fields.TEXT) for d in docs]


def vector(ctx: RetrievalContext, query: str) -> list[Snippet]:
    """The ``solr.topK`` nearest chunks."""
    return vector_chunks(ctx, query, ctx.params.top_k)
