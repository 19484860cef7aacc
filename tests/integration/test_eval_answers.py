"""`datafari-rag eval answers` end to end on a tiny corpus, with the local agent as the LLM (CI smoke)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from datafari_rag.cli import main as cli
from datafari_rag.config import Settings
from tests.integration.conftest import cli_environment

CORPUS = {
    "p1": ("Lighthouses", "The Bell Rock Lighthouse was built between 1807 and 1810 off the coast of Angus."),
    "p2": ("Volcanoes", "Mount Etna is the most active volcano in Europe and stands on the island of Sicily."),
    "p3": ("Glaciers", "The Aletsch Glacier is the largest glacier in the Alps, in the Swiss canton of Valais."),
}
QA = [
    {"id": "q1", "question": "When was the Bell Rock Lighthouse built?", "answers": ["between 1807 and 1810"]},
    {"id": "q2", "question": "On which island is Mount Etna?", "answers": ["Sicily", "the island of Sicily"]},
    {"id": "q3", "question": "Which is the largest glacier in the Alps?", "answers": ["The Aletsch Glacier"]},
    {"id": "q4", "question": "What is the recipe of a lemon meringue pie?", "answers": [], "is_impossible": True},
]


def test_eval_answers_command(tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "qa"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, (t, x) in CORPUS.items())
    )
    gold = {"q1": "p1", "q2": "p2", "q3": "p3", "q4": "p3"}
    (folder / "qa.jsonl").write_text(
        "".join(json.dumps({"is_impossible": False, **q, "gold_doc_id": gold[q["id"]]}) + "\n" for q in QA)
    )
    agent = settings.agent_url
    cli_environment(monkeypatch, tmp_path / "var", settings, SOLR_EMBEDDINGS_ENDPOINT=agent, AI_API_ENDPOINT=agent)
    out = tmp_path / "answers.json"
    args = ["eval", "answers", str(folder), "--all", "--method", "vector", "--prefix", "evalqa_t_", "--json", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "abstention accuracy" in result.output and "token F1" in result.output  # the table
    data = json.loads(out.read_text())
    assert (data["answerable"], data["unanswerable"], data["errors"]) == (3, 1, 0)
    assert data["gold_paragraph_hit"] == 1.0  # each answer's paragraph reached the LLM
    assert data["answer_contains_gold"] == 1.0  # the extractive agent quotes the right sentence
    assert data["abstention_accuracy"] == 1.0  # nothing about pies: "I could not find the answer…"
    assert 0 < data["f1"] < 1 and data["mean_latency_s"] > 0
    assert "rag.minConfidence hides none" not in result.output  # the local generator: its answers are weighed
    # another LLM's answers (the same agent, named otherwise): the curve is said not to be the product's
    other = CliRunner().invoke(cli, [*args[:-2], "--set", "llm.model=another-llm"])
    assert other.exit_code == 0, other.output
    assert "rag.minConfidence hides none of them" in other.output and "LLM: another-llm" in other.output
