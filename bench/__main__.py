"""``python -m bench`` (``make bench``): every benchmark, one after the other, then a summary table.

Each benchmark runs in a process of its own (its own Solr node and servers) and prints its line as
it finishes; the table gathers their figures with the targets the issues set.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import RESULTS_ENV

BENCHMARKS = [
    "embedding",
    "models",
    "query_model",
    "solr_overhead",
    "solr_filter",
    "rag_overhead",
    "chunk_guard",
    "concurrency",
    "streaming",
    "indexing",
    "acl_leaks",
    "cache",
    "store",
    "health",
    "readiness",
    "passthrough",
]
# make bench SCALE=1: how costs grow with the index (long: the largest size writes a million chunks)
SCALE_RUNS = [["--sizes", "10000,100000"], ["--sizes", "1000000", "--nodes", "2"]]


def table(rows: list[dict], failed: list[str]) -> str:
    header = ("benchmark", "figure", "value", "target", "met")
    cells = [
        (
            r["bench"],
            r["name"],
            f"{r['value']:.3g} {r['unit']}".strip(),
            r["target"] or "-",
            {True: "yes", False: "NO", None: "-"}[r["met"]],
        )
        for r in rows
    ]
    cells += [(name, "did not finish", "-", "-", "NO") for name in failed]
    widths = [max(len(str(c[i])) for c in [header, *cells]) for i in range(len(header))]
    return "\n".join("  ".join(str(c[i]).ljust(widths[i]) for i in range(len(header))) for c in [header, *cells])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller runs of every benchmark")
    parser.add_argument("--only", default="", help=f"comma-separated subset of: {', '.join(BENCHMARKS)}")
    parser.add_argument("--results", type=Path, help="also write every figure here (JSON lines)")
    parser.add_argument("--scale", action="store_true", help="only bench/scale.py, at every size (make bench SCALE=1)")
    args = parser.parse_args()
    chosen = [b.strip() for b in args.only.split(",") if b.strip()] or BENCHMARKS
    unknown = sorted(set(chosen) - set(BENCHMARKS))
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    began = time.monotonic()
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results.jsonl"
        results.touch()
        env = {**os.environ, RESULTS_ENV: str(results)}
        runs = [("scale", r) for r in (SCALE_RUNS[:1] if args.quick else SCALE_RUNS)] if args.scale else []
        for name, extra in runs or [(name, []) for name in chosen]:
            command = [sys.executable, "-m", f"bench.{name}", *extra, *(["--quick"] if args.quick else [])]
            if subprocess.run(command, env=env).returncode != 0:
                failed.append(name)
        rows = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines() if line.strip()]
        if args.results:
            args.results.write_text(results.read_text(encoding="utf-8"), encoding="utf-8")
    minutes = (time.monotonic() - began) / 60
    print(f"\nSummary ({'quick' if args.quick else 'full'} run, {minutes:.1f} min):")
    print(table(rows, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
