"""`datafari-rag eval retrieval` on a tiny BEIR folder: the command runs end to end (CI smoke)."""

from __future__ import annotations

import json
from pathlib import Path

import ir_measures
import pytest
from click.testing import CliRunner
from flask import Flask, jsonify, request
from ir_measures import RR, nDCG

from datafari_rag.agent.model import SentenceEmbedder
from datafari_rag.cli import main as cli
from datafari_rag.config import Settings
from datafari_rag.registry import RETRIEVAL_MODES
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.overlap_cross_encoder import write_overlap_cross_encoder
from datafari_rag.testing.servers import serve
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


def beir_folder(folder: Path, docs: dict[str, tuple[str, str]], queries: dict[str, tuple[str, str]]) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, (t, x) in docs.items())
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, (t, _) in queries.items())
    )
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\r\n" + "".join(f"{q}\t{d}\t1\r\n" for q, (_, d) in queries.items())
    )
    return folder


def run_eval(folder: Path, tmp_path: Path, *options: str) -> dict:
    out = tmp_path / "results.json"
    result = CliRunner().invoke(
        cli, ["eval", "retrieval", str(folder), "--prefix", "evaltest_", "--json", str(out), *options]
    )
    assert result.exit_code == 0, result.output
    assert "nDCG@10" in result.output and "Recall@100" in result.output  # the table
    return json.loads(out.read_text())["results"]


@pytest.fixture
def environment(tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = settings.agent_url
    cli_environment(monkeypatch, tmp_path / "var", settings, SOLR_EMBEDDINGS_ENDPOINT=agent)


def test_eval_retrieval_command(tmp_path: Path, environment: None) -> None:
    results = run_eval(beir_folder(tmp_path / "beir", DOCS, QUERIES), tmp_path)
    assert set(results) == set(RETRIEVAL_MODES.names)
    assert results["vector"]["nDCG@10"] == pytest.approx(1.0)  # paraphrases: the embedding finds each
    assert all(0 < r["nDCG@10"] <= 1 and r["queries"] == 3 for r in results.values())


def test_max_queries_cuts_the_judgements_too(tmp_path: Path, environment: None) -> None:
    """Only the queries asked are scored: the ones cut do not count as zeros."""
    results = run_eval(
        beir_folder(tmp_path / "beir", DOCS, QUERIES), tmp_path, "--modes", "vector", "--max-queries", "1"
    )
    assert results["vector"]["queries"] == 1 and results["vector"]["nDCG@10"] == pytest.approx(1.0)


def test_a_corpus_of_the_same_size_but_other_texts_is_indexed_again(tmp_path: Path, environment: None) -> None:
    """The collections are reused only when they hold the same documents (a fingerprint of ids,
    titles and texts), not merely as many."""
    run_eval(beir_folder(tmp_path / "first", DOCS, QUERIES), tmp_path, "--modes", "bm25")
    other = {**DOCS, "d4": ("Bananas", "Bananas ripen faster next to apples in a closed paper bag.")}
    asked = {"q9": ("how do bananas ripen", "d4")}
    results = run_eval(beir_folder(tmp_path / "second", other, asked), tmp_path, "--modes", "bm25")
    assert results["bm25"]["nDCG@10"] == pytest.approx(1.0)  # the new text was indexed and found


def test_rerank_is_a_flag_of_eval_retrieval(tmp_path: Path, environment: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--rerank onnx`` reranks each mode's results with the cross-encoder of rerank.onnx.path.
    The test's overlap model counts the passage's words that are in the query, so it puts a text
    repeating one query word above the short one BM25 ranks first for holding both: the figures
    are those of the reranked order."""
    docs = {
        "gold": ("Notes", "The pump inspection is on Monday."),
        "decoy": ("Pump", "Pump pump pump pump pump pump pump pump pump pump."),
    }
    queries = {"q1": ("pump inspection", "gold")}
    folder = beir_folder(tmp_path / "beir", docs, queries)
    model = write_overlap_cross_encoder(tmp_path / "cross-encoder")
    monkeypatch.setenv("DATAFARI_RAG_RERANK_ONNX_PATH", str(model))
    plain = run_eval(folder, tmp_path, "--modes", "bm25")
    reranked = run_eval(folder, tmp_path, "--modes", "bm25", "--rerank", "onnx")
    assert plain["bm25"]["MRR@10"] == pytest.approx(1.0)
    assert reranked["bm25"]["MRR@10"] == pytest.approx(0.5)  # the decoy first


def test_query_enhancement_is_measured_with_set(
    tmp_path: Path, environment: None, monkeypatch: pytest.MonkeyPatch, fake_llm_server: tuple[FakeLlm, str]
) -> None:
    """``--set query.hyde.enabled=true``: each query's kNN searches with the passage the LLM wrote
    (here the recording fake LLM writes the judged document's sentence, for a question that alone
    finds another document first)."""
    fake, url = fake_llm_server
    fake.reset(lambda prompt: "Vitamin D supplements improve bone density." if "Task: hyde" in prompt else "")
    monkeypatch.setenv("DATAFARI_RAG_AI_API_ENDPOINT", url)
    folder = beir_folder(tmp_path / "beir", DOCS, {"q1": ("does coffee protect the liver", "d2")})
    plain = run_eval(folder, tmp_path, "--modes", "vector")
    hyde = run_eval(folder, tmp_path, "--modes", "vector", "--set", "query.hyde.enabled=true")
    assert plain["vector"]["MRR@10"] < 1.0 and hyde["vector"]["MRR@10"] == pytest.approx(1.0)
    assert sum("Task: hyde" in p for p in fake.prompts()) == 1


def test_collections_indexed_with_another_model_are_indexed_again(
    tmp_path: Path, environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The marker names the embedding model: switching models re-embeds instead of searching BGE
    queries against MiniLM vectors."""
    folder = beir_folder(tmp_path / "beir", DOCS, QUERIES)
    marker = tmp_path / "var" / "eval" / "evaltest_FileShare.fingerprint"
    monkeypatch.setenv("DATAFARI_RAG_SOLR_EMBEDDINGS_SERVICE", "openai")  # Solr's JVM runs BGE only
    monkeypatch.setenv("DATAFARI_RAG_SOLR_EMBEDDINGS_MODELNAME", "all-MiniLM-L6-v2")
    minilm = run_eval(folder, tmp_path, "--modes", "vector")
    assert ":all-MiniLM-L6-v2," in marker.read_text()
    monkeypatch.setenv("DATAFARI_RAG_SOLR_EMBEDDINGS_MODELNAME", "bge-small-en-v1.5")
    bge = run_eval(folder, tmp_path, "--modes", "vector")
    assert ":bge-small-en-v1.5," in marker.read_text()
    assert minilm["vector"]["nDCG@10"] == pytest.approx(1.0) and bge["vector"]["nDCG@10"] == pytest.approx(1.0)


def test_a_query_the_embedding_service_fails_is_counted_and_the_run_goes_on(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch, embedder: SentenceEmbedder
) -> None:
    """A long run on a busy machine: one query's embedding fails (the service answers 503, after the
    client's retries); that query scores 0, the table says how many failed and why, the others count."""
    app = Flask("flaky-embeddings")

    @app.post("/v1/embeddings")
    def embeddings():  # type: ignore[no-untyped-def]
        texts = request.get_json()["input"]
        if any("remembering" in t for t in texts):
            return jsonify({"error": {"message": "overloaded", "type": "server_error"}}), 503
        vectors = embedder.embed(texts)
        return jsonify({"data": [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)], "model": "m"})

    with serve(app) as service:
        cli_environment(
            monkeypatch,
            tmp_path / "var",
            settings,
            SOLR_EMBEDDINGS_SERVICE="openai",  # the failing service embeds queries, not Solr's own model
            SOLR_EMBEDDINGS_ENDPOINT=f"{service}/v1",
        )
        out = tmp_path / "results.json"
        folder = beir_folder(tmp_path / "beir", DOCS, QUERIES)
        ran = CliRunner().invoke(
            cli,
            ["eval", "retrieval", str(folder), "--prefix", "evalflaky_", "--modes", "bm25,vector", "--json", str(out)],
        )
    assert ran.exit_code == 0, ran.output
    assert "vector: 1 of 3 queries failed, scored 0 (q3: " in ran.output, ran.output
    results = json.loads(out.read_text())["results"]
    assert results["vector"]["failed"] == 1 and results["bm25"]["failed"] == 0
    assert results["vector"]["nDCG@10"] == pytest.approx(2 / 3)  # q1 and q2 found first, q3 counted as 0
