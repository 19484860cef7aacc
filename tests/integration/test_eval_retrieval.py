"""`datafari-rag eval retrieval` on a tiny BEIR folder: the command runs end to end (CI smoke)."""

from __future__ import annotations

import json
from pathlib import Path

import ir_measures
import pytest
from click.testing import CliRunner
from ir_measures import RR, nDCG

from datafari_rag.cli import main as cli
from datafari_rag.config import Settings
from tests.integration.conftest import cli_environment

DOCS = {
    "d1": ("Aspirin and heart attacks", "Daily low-dose aspirin reduces the risk of a first heart attack."),
    "d2": ("Vitamin D and bones", "Vitamin D supplements improve bone density in older adults."),
    "d3": ("Sleep and memory", "Deep sleep consolidates memories formed during the day."),
    "d4": ("Coffee and liver", "Drinking coffee is associated with lower rates of liver cirrhosis."),
}
QUERIES = {
    "q1": ("aspirin lowers heart attack risk", "d1"),
    "q2": ("coffee protects the liver", "d4"),
    "q3": ("sleeping well helps remembering things", "d3"),
}


def test_agreement_with_the_reference_formulas() -> None:
    """ir-measures on a fixed example, against nDCG and RR computed by hand."""
    qrels = {"q": {"a": 1, "b": 1}}
    run = {"q": {"x": 3.0, "a": 2.0, "y": 1.5, "b": 1.0}}
    scores = ir_measures.calc_aggregate([nDCG @ 10, RR @ 10], qrels, run)
    import math

    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 / math.log2(2) + 1 / math.log2(3)
    assert scores[nDCG @ 10] == pytest.approx(dcg / ideal)
    assert scores[RR @ 10] == pytest.approx(0.5)


def test_eval_retrieval_command(tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, (t, x) in DOCS.items())
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, (t, _) in QUERIES.items())
    )
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\r\n" + "".join(f"{q}\t{d}\t1\r\n" for q, (_, d) in QUERIES.items())
    )
    agent = settings.agent_url
    cli_environment(monkeypatch, tmp_path / "var", SOLR_URL=settings.solr_url, SOLR_EMBEDDINGS_ENDPOINT=agent)
    out = tmp_path / "results.json"
    result = CliRunner().invoke(cli, ["eval", "retrieval", str(folder), "--prefix", "evaltest_", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "nDCG@10" in result.output and "Recall@100" in result.output  # the table
    results = json.loads(out.read_text())["results"]
    assert set(results) == {"bm25", "vector", "rrf"}
    assert results["vector"]["nDCG@10"] == pytest.approx(1.0)  # paraphrases: the embedding finds each
    assert all(0 < r["nDCG@10"] <= 1 and r["queries"] == 3 for r in results.values())
