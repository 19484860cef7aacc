"""What the query-time parent check costs: kNN retrieval of the top 10 chunks with the check (twice
as many chunks asked of Solr, their parents looked up in FileShare with the user's filter) against
the same kNN search without it, alternated in the same run. Prints one line with both p50s and
the milliseconds the check adds."""

from __future__ import annotations

import argparse
import time

from bench.common import Figure, bench_stack, emit, percentile
from bench.rag_overhead import QUERIES
from datafari_rag.retrieval import RetrievalContext
from datafari_rag.retrieval.vector import FIELDS, vector_chunks
from datafari_rag.security import UserAccess

TOP_K = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="60 requests")
    args = parser.parse_args()
    count = 60 if args.quick else args.requests
    with bench_stack(prefix="benchguard_") as (settings, solr, _agent):
        ctx = RetrievalContext.of(solr, settings, UserAccess.anonymous())
        plain_params = [("model", settings.embeddings_model), ("vectorField", settings.vector_field), ("fl", FIELDS)]

        def checked(q: str) -> object:
            return vector_chunks(ctx, q, TOP_K)

        def unchecked(q: str) -> object:
            return ctx.vectors.search(
                "vector", [("queryrag", q), *plain_params, ("topK", TOP_K), ("rows", TOP_K)], ctx.access
            )

        times: dict[object, list[float]] = {checked: [], unchecked: []}
        for i in range(count + 20):
            for run in (checked, unchecked) if i % 2 else (unchecked, checked):  # alternate which goes first
                # a new text for each search: Solr's model keeps recent query texts' vectors
                q = QUERIES[i % len(QUERIES)] + f" {i} {run.__name__}"
                began = time.perf_counter()
                run(q)
                if i >= 20:  # warm-up
                    times[run].append((time.perf_counter() - began) * 1000)
        guarded, plain = times[checked], times[unchecked]
    g50, p50 = percentile(guarded, 50), percentile(plain, 50)
    emit(
        "chunk_guard",
        f"chunk_guard: kNN top {TOP_K} with the parent check p50 {g50:.1f} ms p99 {percentile(guarded, 99):.1f} ms, "
        f"without p50 {p50:.1f} ms p99 {percentile(plain, 99):.1f} ms; the check adds {g50 - p50:.1f} ms at p50 "
        f"({count} searches per arm)",
        Figure("kNN top 10, parent check's cost at p50", g50 - p50, "ms"),
    )


if __name__ == "__main__":
    main()
