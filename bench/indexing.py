"""Indexing throughput on SciFact, through FileShare's processor, against the embedding model alone.

Indexes the first N SciFact abstracts through the sidecar's writer: FileShare's update processor
(the only chunk writer) chunks each document in Solr and embeds a request's chunks together —
inside Solr's JVM by default (``solr.embeddings.service=inprocess``), or through the agent's
HTTP API with ``--service openai``. The baseline, same run: the same model (the same ONNX file)
embedding the same chunk texts in-process in Python (read back from VectorMain). The processor
first indexes 400 other abstracts, as the model first embeds a few texts, so that Solr's JIT has
compiled its path: after 48, the JIT compiler's threads still took a tenth of the cores while
the measured documents were written (ratio 0.77-0.80 against 0.86-0.88 after 400 or 1,200).
Prints one line: docs/s and chunks/s, the ratio to the in-process chunks/s
(target: >= 1.0) and Solr's resident memory once it has embedded them.
"""

from __future__ import annotations

import argparse
import json
import time

from bench.common import SCIFACT, SERVICES, Figure, bench_stack, emit, solr_rss_mb
from datafari_rag.agent.model import MODEL_NAME, SentenceEmbedder
from datafari_rag.agent.onnx_model import PACKAGED, OnnxEmbedder
from datafari_rag.indexing.corpus import index_documents
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.paths import SAMPLE_CORPUS

WARM_DOCS = 400


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
    parser.add_argument("--service", choices=SERVICES, default=SERVICES[0], help="solr.embeddings.service")
    args = parser.parse_args()
    measured = 60 if args.quick else args.docs
    read = corpus(measured + (48 if args.quick else WARM_DOCS))
    docs = read[:measured]
    # texts the measurement does not send; the sample corpus has too few: its own, under other ids
    warm = read[measured:] or [{**d, "id": f"warm-{d['id']}"} for d in docs[:48]]
    with bench_stack(prefix="benchidx_", embeddings_service=args.service) as (settings, solr, _agent):
        indexer = Indexer.of(solr, settings)
        # warm-up, as the in-process model has one: Solr's JIT compiles the processor's path
        index_documents(indexer, warm, progress=False)
        indexer.delete_query("*:*", commit=True)
        indexer.vectors.delete_query("*:*", commit=True)
        report = index_documents(indexer, docs, total=len(docs), progress=False)
        assert report.failed == 0, report.errors[:3]
        written = indexer.vectors.count()
        docs_rate, chunks_rate = len(docs) / report.seconds, written / report.seconds
        texts = [d["embedded_content"] for d in indexer.vectors.scan("*:*", "embedded_content")]
        rss = solr_rss_mb(settings.solr_url)
    name = settings.embeddings_model_name
    embedder = SentenceEmbedder() if name == MODEL_NAME else OnnxEmbedder(PACKAGED[name])
    embedder.embed(texts[:8])  # warm-up
    began = time.perf_counter()
    embedder.embed(texts)
    raw = len(texts) / (time.perf_counter() - began)
    ratio = chunks_rate / raw
    where = "in Solr's JVM" if args.service == "inprocess" else "through the agent"
    emit(
        "indexing",
        f"indexing: processor ({name} {where}) {docs_rate:.1f} docs/s, {chunks_rate:.1f} chunks/s; {name} "
        f"in-process in Python {raw:.1f} chunks/s on the same {len(texts)} chunks (ratio {ratio:.2f}, target "
        f">= 1.0); {len(docs)} SciFact docs; Solr RSS {rss:.0f} MB",
        Figure(f"processor chunks/s / model in Python ({args.service})", ratio, "", ">= 1.0", ratio >= 1.0),
        Figure(f"Solr RSS after indexing ({args.service})", rss, "MB"),
    )


if __name__ == "__main__":
    main()
