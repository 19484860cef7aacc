"""Waiting on the LLM must not block other requests.

Prints one line: the throughput of 64 concurrent ``ai/rag`` calls through the sidecar (gunicorn,
production settings) against an LLM stub that takes 1 s, next to the throughput of 64 concurrent
calls straight to the same stub (the baseline, same run); and the wall time of one 10-pack
map-reduce answer with the same 1 s LLM, next to the ideal (maps in parallel + one merge = 2 s).
Targets: ratio >= 0.8 (>= 0.8 x 64 requests/s), map-reduce <= 2.5 s.

The stub stands for a remote LLM and is named as one (``llm.model``, ``--llm-model``): its answers
get what a remote LLM's get (``rag.confidence.relevance`` auto weighs the relevance of the local
generator's answers only). ``--llm-model datafari-rag-extractive`` times the local generator's
path instead: two more embeddings per answer, on the cores the answers share.
"""

from __future__ import annotations

import argparse
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import requests

from bench.common import Figure, bench_stack, emit, warm_solr
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import free_port, serve, served_sidecar, stub_llm_process

BIG_ID = "bench://manual"
LATENCY = 1.0
ROUNDS = 5


_local = threading.local()


def session() -> requests.Session:
    """One keep-alive session per client thread (as a browser or a UI backend keeps its connections)."""
    if not hasattr(_local, "session"):
        _local.session = requests.Session()
    return _local.session


def burst(pool: ThreadPoolExecutor, count: int, call: object) -> float:
    """Requests per second of ``count`` simultaneous calls. The pool's threads, and so their
    keep-alive sessions, live across bursts (steady state: call after a warm-up burst)."""
    began = time.perf_counter()
    list(pool.map(lambda _: call(), range(count)))  # type: ignore[operator]
    return count / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--quick", action="store_true", help="16 concurrent calls")
    parser.add_argument("--llm-model", default="remote-llm-stub", help="llm.model the stub is asked with")
    args = parser.parse_args()
    n = 16 if args.quick else args.concurrency
    stub = FakeLlm(delay=LATENCY)  # in-process, for the map-reduce line (its prompts are counted)
    with (
        bench_stack() as (settings, solr, _agent),
        stub_llm_process(free_port(), LATENCY) as shared,
        serve(stub.app()) as llm,
    ):
        big = "\n\n".join(
            f"Part {i}. " + "The pump maintenance needs a careful check of each valve. " * 14 for i in range(10)
        )
        solr.post(
            f"{settings.collection_main}/update",
            json=[{"id": BIG_ID, "title": "Manual", "url": BIG_ID, "exactContent": big}],
            params={"commit": "true"},
        )
        # one pack per part: a part (~820 chars) fits a 1,500-character prompt, two do not
        burst_settings = settings.replace(llm_endpoint=shared, llm_model=args.llm_model)
        mapreduce_settings = burst_settings.replace(
            llm_endpoint=f"{llm}/v1", chunking_strategy="mapreduce", max_request_size=1500, chunk_size=900
        )
        with (
            served_sidecar(burst_settings, free_port()) as base,
            served_sidecar(mapreduce_settings, free_port()) as mapreduce_base,
        ):

            def rag() -> None:
                body = (
                    session().post(f"{base}/Datafari/rest/v2.0/ai/rag", json={"query": "VPN client"}, timeout=60).json()
                )
                assert body["status"] == "OK", body

            def direct() -> None:
                session().post(
                    f"{shared}/chat/completions", json={"messages": [{"role": "user", "content": "x"}]}, timeout=60
                ).raise_for_status()

            warm_solr(settings, solr, ["VPN client"], bursts=30 if args.quick else 150, concurrency=n)
            with ThreadPoolExecutor(max_workers=n) as pool:
                burst(pool, n, direct), burst(pool, n, rag)  # warm-up: threads and connections of a whole burst
                # interleaved rounds, so that drift of the machine touches both sides alike
                rounds = [(burst(pool, n, direct), burst(pool, n, rag)) for _ in range(ROUNDS)]
                baseline = sum(d for d, _ in rounds) / ROUNDS
                through = sum(r for _, r in rounds) / ROUNDS
            stub.reset(delay=LATENCY)
            began = time.perf_counter()
            body = requests.post(
                f"{mapreduce_base}/Datafari/rest/v2.0/ai/rag", json={"query": "pump valve", "id": BIG_ID}, timeout=60
            ).json()
            wall = time.perf_counter() - began
            assert body["status"] == "OK", body
            maps = sum(1 for p in stub.prompts() if p.startswith("Task: answer"))
    ratio = through / baseline
    emit(
        "concurrency",
        f"concurrency: {n} concurrent ai/rag with a {LATENCY:.0f} s LLM: {through:.1f} req/s vs {baseline:.1f} req/s "
        f"straight to the LLM stub (ratio {through / baseline:.2f}, target >= 0.8); "
        f"{maps}-pack map-reduce: {wall:.2f} s (ideal {2 * LATENCY:.1f} s, target <= 2.5 s; "
        f"llm.model {args.llm_model})",
        Figure(f"{n} concurrent ai/rag / straight to the LLM", ratio, "", ">= 0.8", ratio >= 0.8),
        Figure(f"{maps}-pack map-reduce wall time", wall, "s", "<= 2.5 s", wall <= 2.5),
    )


if __name__ == "__main__":
    main()
