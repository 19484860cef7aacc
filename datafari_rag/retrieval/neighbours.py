"""Parent-child enrichment: a chunk found in VectorMain brings its neighbours (``chunk_index ± w``
of the same parent), read from VectorMain with the user's access filter, so the LLM reads the
chunk in its context. Hits of one parent whose windows touch become one passage."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .. import chunk_fields
from .base import RetrievalContext, Snippet, first

MAX_PARENTS = 50  # one request: the clauses of at most this many parents


def with_neighbours(ctx: RetrievalContext, found: list[Snippet], width: int) -> list[Snippet]:
    """Each chunk's text replaced by its window's (in ``chunk_index`` order); passages that are not
    chunks (BM25 documents) are kept as they are. The order of ``found`` is kept, a merged window
    taking the place of its best hit."""
    windows = _windows([x for x in found if x.chunk is not None], width)
    if not windows:
        return found
    texts = _fetch(ctx, windows)
    out: list[Snippet] = []
    placed: set[tuple[str, int]] = set()
    for x in found:
        if x.chunk is None or x.id not in windows:  # not a chunk, or past MAX_PARENTS: as found
            out.append(x)
            continue
        low, high = next(w for w in windows[x.id] if w[0] <= x.chunk <= w[1])
        if (x.id, low) in placed:
            continue  # its window is already there, from a better hit
        placed.add((x.id, low))
        parts = [texts[x.id][i] for i in range(low, high + 1) if i in texts.get(x.id, {})]
        out.append(replace(x, content="\n".join(parts) or x.content, chunk=low))
    return out


def _windows(chunks: list[Snippet], width: int) -> dict[str, list[tuple[int, int]]]:
    """Per parent, the merged ranges [i - width, i + width] of its hits."""
    ranges: dict[str, list[tuple[int, int]]] = {}
    for x in chunks:
        assert x.chunk is not None
        ranges.setdefault(x.id, []).append((max(0, x.chunk - width), x.chunk + width))
    merged: dict[str, list[tuple[int, int]]] = {}
    for parent, spans in list(ranges.items())[:MAX_PARENTS]:
        spans.sort()
        joined = [spans[0]]
        for low, high in spans[1:]:
            if low <= joined[-1][1] + 1:
                joined[-1] = (joined[-1][0], max(joined[-1][1], high))
            else:
                joined.append((low, high))
        merged[parent] = joined
    return merged


def _fetch(ctx: RetrievalContext, windows: dict[str, list[tuple[int, int]]]) -> dict[str, dict[int, str]]:
    """The chunks of every window, in one VectorMain request carrying the user's access filter."""
    clauses: list[str] = []
    params: list[tuple[str, Any]] = []
    rows = 0
    for n, (parent, spans) in enumerate(windows.items()):
        params.append((f"nb{n}", parent))
        ranges = " OR ".join(f"{chunk_fields.INDEX}:[{low} TO {high}]" for low, high in spans)
        clauses.append(f"(+{{!term f={chunk_fields.PARENT} v=$nb{n}}} +({ranges}))")
        rows += sum(high - low + 1 for low, high in spans)
    query = [("q", " OR ".join(clauses)), ("defType", "lucene"), ("rows", rows)]
    query.append(("fl", f"{chunk_fields.PARENT},{chunk_fields.INDEX},{chunk_fields.TEXT}"))
    docs = ctx.vectors.search("select", [*query, *params, *ctx.restrict.vector_params()], ctx.access)
    texts: dict[str, dict[int, str]] = {}
    for doc in docs["response"]["docs"]:
        index = doc.get(chunk_fields.INDEX)
        if isinstance(index, int):
            texts.setdefault(first(doc.get(chunk_fields.PARENT)), {})[index] = first(doc.get(chunk_fields.TEXT))
    return texts
