"""Datafari 6.2's in-memory vector search (``rag.enable.vector.search``, deprecated there, kept for
deployments where VectorMain is not built): the best BM25 documents (``chunking.maxFiles``), read
through the secured search, are cut into chunks of ``chunking.chunk.size`` characters, embedded at
query time with the question by the chunks' model, and ranked by cosine in memory; the
``inMemory.maxChunks`` closest are kept. Nothing is read that BM25 would not let the user read."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from langchain_text_splitters import RecursiveCharacterTextSplitter

from .base import RetrievalContext, Snippet
from .bm25 import bm25_documents


class NoEmbedder(RuntimeError):
    """The in-memory mode was asked for where no embedding service was given."""


def memory(ctx: RetrievalContext, query: str) -> list[Snippet]:
    if ctx.embed is None:
        raise NoEmbedder("in-memory vector search needs the embedding service")
    documents = bm25_documents(ctx, query, ctx.params.max_files, "exactContent")
    splitter = RecursiveCharacterTextSplitter(chunk_size=ctx.params.chunk_size, chunk_overlap=0)
    chunks = [
        replace(doc, content=piece, chunk=number)
        for doc in documents
        for number, piece in enumerate(splitter.split_text(doc.content))
        if piece.strip()
    ]
    if not chunks:
        return []
    vectors = np.asarray(ctx.embed([ctx.knn_text(query), *(c.content for c in chunks)]), dtype=np.float32)
    vectors /= np.where((norms := np.linalg.norm(vectors, axis=1, keepdims=True)) == 0, 1, norms)
    scores = vectors[1:] @ vectors[0]
    order = sorted(range(len(chunks)), key=lambda i: -float(scores[i]))[: ctx.params.in_memory_chunks]
    return [replace(chunks[i], score=float(scores[i])) for i in order]
