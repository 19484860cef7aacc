"""`python -m bench --quick` (what `make bench QUICK=1` runs): every benchmark runs to the end and
reports its figures, so the scripts cannot rot. No figure is bounded here: performance is judged
by `make bench`, never by timed tests. About ten minutes: `make e2e` runs it, not `make test`."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

from bench.__main__ import BENCHMARKS
from datafari_rag.config import Settings
from datafari_rag.paths import PROJECT_ROOT


def test_every_benchmark_runs_and_reports(settings: Settings, tmp_path: Path) -> None:
    results = tmp_path / "figures.jsonl"
    env = {
        **os.environ,
        "DATAFARI_RAG_SOLR_URL": settings.solr_url,
        "DATAFARI_RAG_SOLR_USERNAME": settings.solr_username,
        "DATAFARI_RAG_SOLR_PASSWORD": settings.solr_password,
        "DATAFARI_RAG_VAR": str(tmp_path / "var"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--results", str(results)],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    figures = [json.loads(line) for line in results.read_text().splitlines()]
    assert {f["bench"] for f in figures} == set(BENCHMARKS)
    assert all(math.isfinite(f["value"]) for f in figures)
    assert "Summary (quick run" in done.stdout
    for figure in figures:  # each benchmark's one line, and its figure in the table
        assert figure["line"] in done.stdout and figure["name"] in done.stdout
