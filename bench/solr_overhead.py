"""The sidecar's cost on plain searches: the same BM25 (``search/select``) and kNN (``search/vector``)
queries through the sidecar and straight to Solr, alternated in the same run. The direct request
carries exactly what the sidecar sends (the anonymous user's ACL filter included), so the ratio is
the sidecar's own share. Prints one line with p50/p99 of both and the p50 ratio (target <= 1.10).

FileShare holds the SciFact abstracts when the evaluation data is there (BM25 over 5,183 documents),
VectorMain the sample corpus's chunks.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import requests

from bench.common import SCIFACT, Figure, bench_stack, emit, percentile, warm_solr
from datafari_rag.config import Settings
from datafari_rag.security import UserAccess
from datafari_rag.security.acl import acl_params
from datafari_rag.solr import SolrClient
from tests.servers import free_port, served_sidecar

SAMPLE_QUERIES = ["paid annual leave", "reset my password", "VPN client", "parking electric chargers", "congés payés"]
API = "/Datafari/rest/v2.0"


def load_scifact(solr: SolrClient, settings: Settings, limit: int) -> list[str]:
    """Adds SciFact abstracts to FileShare (BM25 only: no embedding needed) and returns claims as queries."""
    if not SCIFACT.exists():
        return SAMPLE_QUERIES
    docs = []
    with SCIFACT.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            docs.append({"id": f"scifact-{d['_id']}", "title": d["title"], "url": d["_id"], "exactContent": d["text"]})
            if len(docs) == limit:
                break
    for start in range(0, len(docs), 1000):
        solr.post(f"{settings.collection_main}/update", json=docs[start : start + 1000], timeout=300)
    solr.post(f"{settings.collection_main}/update", json={"commit": {}})
    queries_file = SCIFACT.parent / "queries.jsonl"
    return [json.loads(line)["text"] for line in queries_file.open(encoding="utf-8")]


def measure(calls: list[tuple[Callable[[], Any], Callable[[], Any]]], warmup: int) -> tuple[list[float], list[float]]:
    """Times each (direct, sidecar) pair back to back, so drift hits both equally; which one goes
    first alternates, so that whatever the first call leaves warm favours neither."""
    direct, sidecar = [], []
    for i, pair in enumerate(calls):
        times = {}
        for arm in (0, 1) if i % 2 == 0 else (1, 0):
            began = time.perf_counter()
            pair[arm]()
            times[arm] = (time.perf_counter() - began) * 1000
        if i >= warmup:
            direct.append(times[0])
            sidecar.append(times[1])
    return direct, sidecar


def summary(name: str, direct: list[float], sidecar: list[float]) -> str:
    d50, s50 = percentile(direct, 50), percentile(sidecar, 50)
    return (
        f"{name} sidecar p50 {s50:.1f} ms p99 {percentile(sidecar, 99):.1f} ms, Solr p50 {d50:.1f} ms "
        f"p99 {percentile(direct, 99):.1f} ms, ratio {s50 / d50:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--docs", type=int, default=6000, help="SciFact abstracts added to FileShare")
    parser.add_argument("--quick", action="store_true", help="60 requests per mode, 1,000 documents")
    args = parser.parse_args()
    count, docs = (60, 1000) if args.quick else (args.requests, args.docs)
    acl = [*acl_params(UserAccess.anonymous()), ("echoParams", "none"), ("wt", "json")]
    with bench_stack("benchso_") as (settings, solr, _agent):
        queries = load_scifact(solr, settings, docs)
        warm_solr(settings, solr, queries, bursts=40 if args.quick else 200, concurrency=8)
        with served_sidecar(settings, free_port()) as base, requests.Session() as http:
            http.trust_env = False

            def ok(response: requests.Response) -> None:
                response.raise_for_status()
                assert response.json().get("status") != "ERROR", response.text

            def bm25(i: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
                # two different queries: Solr's result cache must not answer the second call
                q, other = queries[2 * i % len(queries)], queries[(2 * i + 1) % len(queries)]
                direct = [("q", q), ("defType", "edismax"), ("q.op", "OR"), ("start", 0), ("rows", 10)]
                return (
                    lambda: ok(http.post(f"{settings.solr_url}/{settings.collection_main}/select", data=direct + acl)),
                    lambda: ok(http.get(f"{base}{API}/search/select", params={"q": other})),
                )

            def knn(i: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
                # the same query: its embedding (most of the time) is computed by each call anyway
                q = other = queries[i % len(queries)]
                direct = [
                    ("queryrag", q),
                    ("topK", settings.solr_top_k),
                    ("rows", settings.solr_top_k),
                    ("model", settings.embeddings_model),
                    ("vectorField", settings.vector_field),
                ]
                url = f"{settings.solr_url}/{settings.collection_vector}/vector"
                return (
                    lambda: ok(http.post(url, data=direct + acl)),
                    lambda: ok(http.get(f"{base}{API}/search/vector", params={"queryrag": other})),
                )

            bm25_times = measure([bm25(i) for i in range(count + 20)], warmup=20)
            knn_times = measure([knn(i) for i in range(count // 2 + 10)], warmup=10)
    ratios = {
        name: percentile(s, 50) / percentile(d, 50) for name, (d, s) in {"bm25": bm25_times, "kNN": knn_times}.items()
    }
    emit(
        "solr_overhead",
        f"solr_overhead: {summary('bm25 search/select', *bm25_times)}; {summary('kNN search/vector', *knn_times)} "
        f"(target ratio <= 1.10 at p50; {len(bm25_times[0])} + {len(knn_times[0])} requests)",
        *(Figure(f"{name} p50 sidecar / Solr", r, "", "<= 1.10", r <= 1.10) for name, r in ratios.items()),
    )


if __name__ == "__main__":
    main()
