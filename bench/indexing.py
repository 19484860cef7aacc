"""Indexing throughput on SciFact, through FileShare's processor, against the embedding model alone.

Indexes the first N SciFact abstracts through the sidecar's writer: FileShare's update processor
(the only chunk writer) chunks each document in Solr and embeds a request's chunks together.
The baseline, same run: the model embedding the same chunk texts in-process (read back from
VectorMain). The processor first indexes 48 other documents, as the model first embeds a few
texts, so that Solr's JIT has compiled its path.
Prints one line: docs/s and chunks/s, and the ratio to the in-process chunks/s. Target: >= 0.9.
"""

from __future__ import annotations

import argparse
import json
import time

from bench.common import SCIFACT, Figure, bench_stack, emit
from datafari_rag.agent.model import SentenceEmbedder
from datafari_rag.indexing.corpus import index_documents
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.paths import SAMPLE_CORPUS


def corpus(limit: int) -> list[dict[str, str]]:
    path = SCIFACT if SCIFACT.exists() else SAMPLE_CORPUS
    docs = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            docs.append(
                {"id": str(row.get("_id", row.get("id"))), "title": row.get("title", ""), "exactContent": row["text"]}
            )
            if len(docs) == limit:
                break
    return docs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=400, help="SciFact abstracts to index (5183: all)")
    parser.add_argument("--quick", action="store_true", help="60 documents")
    args = parser.parse_args()
    docs = corpus(60 if args.quick else args.docs)
    with bench_stack(prefix="benchidx_") as (settings, solr, _agent):
        indexer = Indexer.of(solr, settings)
        # warm-up, as the in-process model has one: Solr's JIT compiles the processor's path
        index_documents(indexer, [{**d, "id": f"warm-{d['id']}"} for d in docs[:48]], progress=False)
        indexer.delete_query("*:*", commit=True)
        indexer.vectors.delete_query("*:*", commit=True)
        report = index_documents(indexer, docs, total=len(docs), progress=False)
        assert report.failed == 0, report.errors[:3]
        written = indexer.vectors.count()
        docs_rate, chunks_rate = len(docs) / report.seconds, written / report.seconds
        texts = [d["embedded_content"] for d in indexer.vectors.scan("*:*", "embedded_content")]
    embedder = SentenceEmbedder()
    embedder.embed(texts[:8])  # warm-up
    began = time.perf_counter()
    embedder.embed(texts)
    raw = len(texts) / (time.perf_counter() - began)
    ratio = chunks_rate / raw
    emit(
        "indexing",
        f"indexing: processor {docs_rate:.1f} docs/s, {chunks_rate:.1f} chunks/s; model in-process {raw:.1f} "
        f"chunks/s on the same {len(texts)} chunks (ratio {ratio:.2f}); {len(docs)} SciFact docs; target >= 0.9",
        Figure("processor chunks/s / model in-process", ratio, "", ">= 0.9", ratio >= 0.9),
    )


if __name__ == "__main__":
    main()
