"""BM25 retrieval: FileShare ``/select`` with ``q.op`` = ``rag.operator``; a document's text is
``rag.solrField``'s (Datafari 6.1): the whole ``exactContent``, its ``preview_content``, or the
passage Solr's highlighter finds best for the query (``rag.hl.fragsize`` characters, no tags)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..solr.search import from_user
from .base import RetrievalContext, Snippet, to_snippet, words_only

FIELDS = "id,title,url,score"


def highlighting(fragsize: int, pre: str = "", post: str = "") -> dict[str, str]:
    """One passage of the stored text per document (the analysed fields are not stored), matched
    on the query's words as typed; the lucene parser reads ``hl.q``'s local parameters (edismax,
    the request's own, would not)."""
    return {
        "hl": "true",
        "hl.method": "unified",
        "hl.fl": "exactContent",
        "hl.fragsize": str(fragsize),
        "hl.snippets": "1",
        "hl.tag.pre": pre,
        "hl.tag.post": post,
        "hl.q": "{!edismax qf=exactContent v=$q}",
        "hl.qparser": "lucene",
    }


def bm25_documents(ctx: RetrievalContext, query: str, rows: int, field: str = "exactContent") -> list[Snippet]:
    words = words_only(query)
    if not words:
        return []
    params: list[tuple[str, Any]] = [from_user("q", words), ("q.op", ctx.params.operator), ("rows", rows)]
    params += [("defType", "edismax"), *ctx.restrict.main_params()]
    if field == "highlighting":
        params += [("fl", FIELDS), *highlighting(ctx.params.hl_fragsize).items()]
    else:
        params.append(("fl", f"{FIELDS},{field}"))
    found = ctx.main.search("select", params, ctx.access)
    docs = found["response"]["docs"]
    if field == "highlighting":
        passages = found.get("highlighting", {})
        snippets = [
            replace(to_snippet(d, "id"), content="".join(passages.get(d["id"], {}).get("exactContent", [])))
            for d in docs
        ]
    else:
        snippets = [to_snippet(d, field) for d in docs]
    return [s for s in snippets if s.content.strip()]


def bm25(ctx: RetrievalContext, query: str) -> list[Snippet]:
    """The ``chunking.maxFiles`` best documents (their ``rag.solrField`` text, chunked later)."""
    return bm25_documents(ctx, query, ctx.params.max_files, ctx.params.text_field)
