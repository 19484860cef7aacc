"""The RAG pipeline's own time: ``ai/rag`` with an LLM stub that answers instantly, against the
same BM25 query sent straight to Solr in the same run. The stub stands for an LLM and is named as a
remote one (``llm.model`` ``remote-llm-stub``, as ``bench/concurrency.py`` names its own); the same
run also asks it named as the local extractive generator, whose answers' relevance is weighed (an
embedding of the question and the answer: ``rag.confidence.relevance`` auto). Prints one line with
p50/p99 of both and the pipeline's own share (the difference, target <= 6 ms; and the local
generator's), then one line with each step's p50, read from the answers' ``Server-Timing`` header
(retrieve and generate include the Solr and LLM calls they wait on)."""

from __future__ import annotations

import argparse
import time

import requests

from bench.common import Figure, bench_stack, emit, percentile
from datafari_rag.config import EXTRACTIVE_MODEL, Settings
from datafari_rag.solr.service_account import credentials
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import free_port, serve, served_sidecar

REMOTE = "remote-llm-stub"  # llm.model the stub is asked with: any LLM but the local generator
QUERIES = [
    "paid annual leave",
    "reset my password",
    "VPN client",
    "parking electric chargers",
    "congés payés",
    "quarterly revenue",
    "phishing emails",
    "cafeteria lunch",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="40 requests")
    args = parser.parse_args()
    count = 40 if args.quick else args.requests
    with bench_stack() as (settings, _, _agent), serve(FakeLlm().app()) as llm:
        remote = settings.replace(llm_endpoint=f"{llm}/v1", retrieval_method="bm25", llm_model=REMOTE)
        direct, rag, steps = measure(settings, remote, count)
        # the same stub named as the local extractive generator: its answers' relevance is weighed
        local_direct, local_rag, local_steps = measure(settings, remote.replace(llm_model=EXTRACTIVE_MODEL), count)
    p50, p99 = percentile(rag, 50), percentile(rag, 99)
    d50, d99 = percentile(direct, 50), percentile(direct, 99)
    own = p50 - d50
    local_own = percentile(local_rag, 50) - percentile(local_direct, 50)
    emit(
        "rag_overhead",
        f"rag_overhead: ai/rag (bm25, instant LLM named as a remote one) p50 {p50:.1f} ms p99 {p99:.1f} ms; "
        f"same query straight to Solr p50 {d50:.1f} ms p99 {d99:.1f} ms; pipeline's own p50 {own:.1f} ms "
        f"(target <= 6 ms; {count} requests); named as the local extractive generator (its answers' "
        f"relevance weighed, cite {percentile(local_steps['cite'], 50):.1f} ms) {local_own:.1f} ms",
        Figure("ai/rag with an instant LLM, p50", p50, "ms"),
        Figure("pipeline's own time (ai/rag - Solr), p50", own, "ms", "<= 6 ms", own <= 6),
        Figure("pipeline's own time, the local generator's relevance weighed, p50", local_own, "ms"),
    )
    shown = ", ".join(f"{step} {percentile(ms, 50):.2f}" for step, ms in steps.items())
    emit(
        "rag_overhead",
        f"rag_overhead steps (p50 ms, Server-Timing): {shown}",
        *(Figure(f"step {step}, p50", percentile(ms, 50), "ms") for step, ms in steps.items()),
    )


def measure(
    settings: Settings, sidecar: Settings, count: int
) -> tuple[list[float], list[float], dict[str, list[float]]]:
    """``count`` questions through a served sidecar, each also sent straight to Solr: (Solr's ms,
    ai/rag's ms, each step's ms)."""
    direct, rag = [], []
    steps: dict[str, list[float]] = {}
    with served_sidecar(sidecar, free_port()) as base, requests.Session() as http:
        solr_url = f"{settings.solr_url}/{settings.collection_main}/select"
        for i in range(count + 10):
            q = QUERIES[i % len(QUERIES)]
            began = time.perf_counter()
            http.get(
                solr_url,
                params={"q": q, "q.op": "OR", "rows": 3, "fl": "id,title,url,exactContent", "wt": "json"},
                timeout=30,
                auth=credentials(settings),  # as the sidecar asks Solr: the service account
            ).raise_for_status()
            direct_ms = (time.perf_counter() - began) * 1000
            began = time.perf_counter()
            answer = http.post(f"{base}/Datafari/rest/v2.0/ai/rag", json={"query": q}, timeout=30)
            rag_ms = (time.perf_counter() - began) * 1000
            body = answer.json()
            assert body["status"] == "OK", body
            if i >= 10:  # warm-up
                direct.append(direct_ms)
                rag.append(rag_ms)
                for step, ms in server_timing(answer.headers["Server-Timing"]).items():
                    steps.setdefault(step, []).append(ms)
    return direct, rag, steps


def server_timing(header: str) -> dict[str, float]:
    """``retrieve;dur=4.210, generate;dur=1.004`` as step -> milliseconds."""
    steps = (part.strip().split(";dur=") for part in header.split(",") if ";dur=" in part)
    return {step: float(ms) for step, ms in steps}


if __name__ == "__main__":
    main()
