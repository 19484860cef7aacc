"""bge-small-en-v1.5 quantized to 8 bits as the queries' model, against the full model (the baseline).

What ``solr.embeddings.queryModelName=bge-small-en-v1.5-q`` trades: each SciFact question embedded
alone on one core by both models (p50 over the questions, after 10 to warm up), the cosine of
their two vectors, and kNN nDCG@10 on SciFact's test questions against its abstracts embedded by
the full model (as the passages stay), exact search with numpy: the retrieval each query model
gives over the same index. ``--quick``: 60 questions, 1,000 abstracts.
"""

from __future__ import annotations

import argparse
import csv
import json
import time

import numpy as np

from bench.common import SCIFACT, Figure, emit, percentile
from datafari_rag.agent.onnx_model import BGE_SMALL, BGE_SMALL_Q, OnnxEmbedder


def ndcg10(ranked: list[str], gains: dict[str, int]) -> float:
    dcg = sum(gains.get(doc, 0) / np.log2(rank + 2) for rank, doc in enumerate(ranked[:10]))
    ideal = sum(g / np.log2(rank + 2) for rank, g in enumerate(sorted(gains.values(), reverse=True)[:10]))
    return float(dcg / ideal) if ideal else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="60 questions, 1,000 abstracts")
    args = parser.parse_args()
    questions = {q["_id"]: q["text"] for q in map(json.loads, (SCIFACT.parent / "queries.jsonl").open())}
    qrels: dict[str, dict[str, int]] = {}
    with (SCIFACT.parent / "qrels" / "test.tsv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    docs = [json.loads(line) for line in SCIFACT.open(encoding="utf-8")][: 1000 if args.quick else None]
    ids = [d["_id"] for d in docs]
    kept = set(ids)
    tested = [q for q in qrels if q in questions and set(qrels[q]) & kept][: 60 if args.quick else None]
    full, quantized = OnnxEmbedder(BGE_SMALL), OnnxEmbedder(BGE_SMALL_Q)

    def alone(model: OnnxEmbedder) -> float:
        times = []
        for i, q in enumerate(tested):
            began = time.perf_counter()
            model.embed([questions[q]])  # one text: one core, as Solr embeds a query
            if i >= 10:
                times.append((time.perf_counter() - began) * 1000)
        return percentile(times, 50)

    full_ms, quantized_ms = alone(full), alone(quantized)
    asked = [questions[q] for q in tested]
    full_q, quantized_q = full.embed(asked), quantized.embed(asked)
    cosines = np.sum(full_q * quantized_q, axis=1)
    passages = full.embed([f"{d['title']}\n{d['text']}" for d in docs])

    def ndcg(vectors: np.ndarray) -> float:
        return float(
            np.mean(
                [
                    ndcg10([ids[j] for j in np.argsort(-(passages @ v))[:10]], qrels[q])
                    for q, v in zip(tested, vectors, strict=True)
                ]
            )
        )

    full_ndcg, quantized_ndcg = ndcg(full_q), ndcg(quantized_q)
    emit(
        "query_model",
        f"query_model: a question embedded alone p50 {quantized_ms:.1f} ms quantized vs {full_ms:.1f} ms full "
        f"({full_ms / quantized_ms:.2f}x); cosine to the full model's vector mean {cosines.mean():.4f} min "
        f"{cosines.min():.4f}; SciFact kNN nDCG@10 over full-model passages {quantized_ndcg:.4f} quantized vs "
        f"{full_ndcg:.4f} full ({len(tested)} questions, {len(docs)} abstracts)",
        Figure("query embedding p50, quantized", quantized_ms, "ms"),
        Figure("query embedding speed-up", full_ms / quantized_ms),
        Figure("SciFact kNN nDCG@10 change", quantized_ndcg - full_ndcg),
    )


if __name__ == "__main__":
    main()
