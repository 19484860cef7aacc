"""Indexing: chunk-and-embed into VectorMain (Datafari's vector.* keys), index jobs and their callbacks."""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import CHUNKERS
from .keys import INDEX, SPLITTERS, key


@dataclass(frozen=True)
class IndexingSettings:
    """Chunk-and-embed, index jobs, callbacks (vector.*, jobs.*, callbacks.*)."""

    vector_enabled: bool = key(INDEX, "vector.enabled", True, "Every FileShare document gets its chunks in VectorMain.")
    vector_chunk_size: int = key(INDEX, "vector.chunksize", 300, "Chunk size, in vector.chunksize.unit.", minimum=10)
    vector_chunk_unit: str = key(
        INDEX,
        "vector.chunksize.unit",
        "tokens",
        "tokens of the embedding model, or characters.",
        choices=("tokens", "characters"),
    )
    vector_max_overlap: int = key(INDEX, "vector.maxoverlap", 0, "Overlap between chunks, in the same unit.")
    vector_splitter: str = key(
        INDEX,
        "vector.splitter",
        "recursiveSplitter",
        "Where text is cut first; a piece still too large is cut finer.",
        choices=SPLITTERS,
    )
    vector_chunker: str = key(
        INDEX,
        "vector.chunker",
        "recursive",
        CHUNKERS.help() + ". semantic and proposition measure vector.chunksize in characters; the sidecar "
        "cuts, Solr embeds.",
        choices=CHUNKERS.names,
    )
    vector_semantic_percentile: float = key(
        INDEX,
        "vector.semantic.percentile",
        95.0,
        "semantic: a chunk ends where the distance between two sentences is above this percentile of the document's.",
        minimum=50,
        maximum=99,
    )
    vector_chunker_evaluator: bool = key(
        INDEX,
        "vector.chunker.evaluator",
        False,
        "The LLM scores each chunk from 0 to 1 (self-contained, meaningful, one topic); below the threshold: dropped.",
    )
    vector_chunker_evaluator_threshold: float = key(
        INDEX, "vector.chunker.evaluator.threshold", 0.9, "The evaluator's lowest score kept.", maximum=1
    )
    jobs_max_documents: int = key(
        INDEX, "index.jobs.maxDocuments", 10000, "POST …/index/jobs: documents (or files) one job may hold.", minimum=1
    )
    callback_allowed_hosts: str = key(
        INDEX,
        "index.callback.allowedHosts",
        "",
        "Hosts (host or host:port, comma-separated) an indexing job's progress may be POSTed to (empty: no callback).",
    )
    index_retry_attempts: int = key(
        INDEX,
        "index.retry.attempts",
        7,
        "A batch Solr answers with a 5xx (the embedding service or a node busy, a shard's leader "
        "lost) is sent again this many times, after index.retry.delay seconds doubling each time "
        "(1+2+...+64 s, about two minutes: a node lost with its ZooKeeper server takes "
        "solr.local.zkSessionTimeout, a ZooKeeper leader change and a shard election, about 10 s "
        "on an idle machine, over 30 s on a busy one and once over 90 s on an overloaded one, while "
        "updates are disabled), before each document is tried alone: back-pressure slows intake "
        "instead of failing documents.",
        maximum=10,
    )
    index_retry_delay: float = key(
        INDEX, "index.retry.delay", 1.0, "Seconds before the first resend of a batch (then doubled).", maximum=60
    )
    callback_retries: int = key(
        INDEX, "index.callback.retries", 3, "A callback that fails is tried again this many times.", maximum=10
    )
    callback_timeout: float = key(
        INDEX, "index.callback.timeout", 5.0, "Seconds one callback may take.", minimum=0.1, maximum=60
    )
    vector_min_chunk_length: int = key(
        INDEX, "vector.filter.minchunklength", 10, "Chunks shorter than this (characters) are dropped."
    )
    vector_min_alnum_ratio: float = key(
        INDEX, "vector.filter.minalphanumratio", 0.3, "Chunks with a smaller share of letters and digits are dropped."
    )
    vector_embedding_batch: int = key(
        INDEX,
        "vector.embedding.batch",
        32,
        "Texts per embedding request the sidecar sends (the semantic chunker's sentences, the cache's "
        "and the guard's texts).",
        minimum=1,
    )
