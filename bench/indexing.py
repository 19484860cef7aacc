"""Indexing throughput on SciFact, in each embedding mode, against the embedding model alone.

Indexes the first N SciFact abstracts (FileShare + VectorMain) in ``sidecar`` mode (the sidecar
chunks and embeds in batches), ``solr`` mode (the sidecar chunks, VectorMain's chain embeds one
chunk per call) and ``processor`` mode (FileShare's update processor chunks each document in Solr
and embeds its chunks in one call), and embeds the same chunk texts in-process (the baseline, same
run; for processor mode, the texts Solr's chunker made, read back from VectorMain). Each mode
first indexes 48 other documents, as the model first embeds a few texts: Solr's JIT has then
compiled that mode's path, whichever mode runs first.
Prints one line: docs/s and chunks/s per mode, and each mode's ratio to the in-process chunks/s.
Targets: sidecar ratio >= 0.8, processor ratio >= 0.9.
"""

from __future__ import annotations

import argparse
import json
import time

from bench.common import SCIFACT, Figure, bench_stack, emit
from datafari_rag.agent.model import SentenceEmbedder
from datafari_rag.indexing.chunker import chunk_text
from datafari_rag.indexing.corpus import index_documents
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.outbox import Outbox
from datafari_rag.paths import SAMPLE_CORPUS
from datafari_rag.solr import user_properties


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
        chunks = [c for d in docs for c in chunk_text(d["exactContent"], settings)]
        embedder = SentenceEmbedder()
        embedder.embed(chunks[:8])  # warm-up
        began = time.perf_counter()
        embedder.embed(chunks)
        raw = len(chunks) / (time.perf_counter() - began)
        rates, baselines = {}, {}
        for mode in ("sidecar", "solr", "processor"):
            mode_settings = settings.replace(vector_embedding_mode=mode)
            enabled = user_properties.text(mode == "processor")
            user_properties.set_properties(solr, settings.collection_main, {"vector.enabled": enabled})
            indexer = Indexer.of(solr, mode_settings, Outbox())
            # warm-up, as the in-process model has one: Solr's JIT compiles this mode's path
            index_documents(indexer, [{**d, "id": f"warm-{d['id']}"} for d in docs[:48]], progress=False)
            indexer.delete_query("*:*", commit=True)
            indexer.vectors.delete_query("*:*", commit=True)
            report = index_documents(indexer, docs, total=len(docs), progress=False)
            assert report.deferred == report.failed == 0, f"{report.errors[:3]} in {mode} mode"
            written = indexer.vectors.count()
            assert report.chunks in (None, written), (report.chunks, written)
            rates[mode] = (len(docs) / report.seconds, written / report.seconds)
            baselines[mode] = raw
        user_properties.set_properties(solr, settings.collection_main, {"vector.enabled": "false"})
        texts = [d["embedded_content"] for d in indexer.vectors.scan("*:*", "embedded_content")]
        embedder.embed(texts[:8])
        began = time.perf_counter()
        embedder.embed(texts)
        baselines["processor"] = len(texts) / (time.perf_counter() - began)
    sidecar_ratio = rates["sidecar"][1] / raw
    processor_ratio = rates["processor"][1] / baselines["processor"]
    emit(
        "indexing",
        "indexing: "
        + "; ".join(
            f"{mode} mode {d:.1f} docs/s, {c:.1f} chunks/s (ratio {c / baselines[mode]:.2f})"
            for mode, (d, c) in rates.items()
        )
        + f"; model in-process {raw:.1f} chunks/s ({len(chunks)} sidecar chunks), "
        f"{baselines['processor']:.1f} chunks/s ({len(texts)} processor chunks); {len(docs)} SciFact docs; "
        "targets sidecar >= 0.8, processor >= 0.9",
        Figure("sidecar-mode chunks/s / model in-process", sidecar_ratio, "", ">= 0.8", sidecar_ratio >= 0.8),
        Figure("solr-mode chunks/s / model in-process", rates["solr"][1] / raw),
        Figure("processor-mode chunks/s / model in-process", processor_ratio, "", ">= 0.9", processor_ratio >= 0.9),
    )


if __name__ == "__main__":
    main()
