"""The semantic cache: ``ai/rag`` (rrf retrieval, instant LLM) on queries asked for the first time
(misses) and asked again (hits), against the same queries with the cache off, in the same run.
Prints one line with the p50 of each."""

from __future__ import annotations

import argparse
import itertools
import time

import requests

from bench.common import Figure, bench_stack, emit, percentile
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import free_port, serve, served_sidecar

SUBJECTS = ["paid annual leave", "password reset", "VPN client", "parking chargers", "phishing emails"]
ASPECTS = ["rules", "how to ask", "who decides", "deadline", "for new employees", "exceptions", "in France", "cost"]


def timed(http: requests.Session, base: str, query: str) -> float:
    began = time.perf_counter()
    body = http.post(f"{base}/Datafari/rest/v2.0/ai/rag", json={"query": query}, timeout=60).json()
    assert body["status"] == "OK", body
    return (time.perf_counter() - began) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="20 queries instead of 40")
    args = parser.parse_args()
    queries = [f"{s} {a}" for s, a in itertools.product(SUBJECTS, ASPECTS)][: 20 if args.quick else 40]
    with bench_stack() as (settings, _, _agent), serve(FakeLlm().app()) as llm:
        base_settings = settings.replace(llm_endpoint=f"{llm}/v1", retrieval_method="rrf", server_workers=1)
        with served_sidecar(base_settings, free_port()) as base, requests.Session() as http:
            for q in queries[:5]:
                timed(http, base, q)  # warm-up
            off = [timed(http, base, q) for q in queries]
        cached = base_settings.replace(cache_enabled=True, cache_version_check=1.0)
        with served_sidecar(cached, free_port()) as base, requests.Session() as http:
            timed(http, base, "warm up the embedding client")
            misses = [timed(http, base, q) for q in queries]
            hits = [timed(http, base, q) for q in queries]
    off50, miss50, hit50 = percentile(off, 50), percentile(misses, 50), percentile(hits, 50)
    emit(
        "cache",
        f"cache: ai/rag (rrf, instant LLM) p50 without cache {off50:.1f} ms; with the cache: miss {miss50:.1f} ms, "
        f"hit {hit50:.1f} ms (hit/off {hit50 / off50:.2f}, miss/off {miss50 / off50:.2f}); {len(queries)} queries",
        Figure("cache hit, p50", hit50, "ms"),
        Figure("cache miss, p50", miss50, "ms"),
        Figure("no cache, p50", off50, "ms"),
    )


if __name__ == "__main__":
    main()
