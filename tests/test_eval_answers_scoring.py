"""SQuAD 2.0 scoring and abstention detection of `datafari-rag eval answers`, on fixed examples."""

from __future__ import annotations

import json
import re

import pytest

from datafari_rag.agent.extractive import NOT_FOUND
from datafari_rag.evaluation.answers import (
    Question,
    abstained,
    answer_text,
    as_json,
    contains_answer,
    exact_match,
    normalize_answer,
    report,
    score,
    table,
    token_f1,
)
from datafari_rag.prompts import ABSTENTIONS


def test_normalisation_is_squads() -> None:
    assert normalize_answer("The  Eiffel-Tower!") == "eiffeltower"
    assert normalize_answer("an apple and a pear") == "apple and pear"


def test_exact_match_and_f1_on_worked_examples() -> None:
    assert exact_match("the 10th and 11th centuries", "10th and 11th centuries") == 1.0
    # prediction 4 tokens, gold 2, 2 in common: precision 0.5, recall 1 -> F1 2/3
    assert token_f1("in France in 911", "France 911") == pytest.approx(2 / 3)
    assert token_f1("Germany", "France") == 0.0
    assert contains_answer("Rollo swore fealty in 911. ", "911")
    assert not contains_answer("Rollo swore fealty in 9110.", "911")


def test_citations_are_not_part_of_the_answer() -> None:
    assert answer_text("Normandy is in France. [Normans]\nIt was named in 911. [Normans]") == (
        "Normandy is in France.\nIt was named in 911."
    )


@pytest.mark.parametrize(
    ("status", "label", "message", "expected"),
    [
        ("OK", None, NOT_FOUND, True),
        ("OK", None, "Je n'ai pas trouvé la réponse dans les documents.", True),  # lang=fr
        ("OK", None, "The documents do not contain any information about the treaty.", True),
        ("OK", None, "The army could not locate the enemy camp. [War]", False),
        ("ERROR", "ragNoFileFound", "Sorry, I couldn't find any relevant document to answer your request.", True),
        ("ERROR", "ragTechnicalError", "Sorry, I met a technical issue.", False),
    ],
)
def test_abstention_detection(status: str, label: str | None, message: str, expected: bool) -> None:
    assert abstained(status, label, message) is expected


def test_report_separates_answerable_and_unanswerable() -> None:
    def body(message: str, ids: list[str]) -> dict:
        return {"status": "OK", "content": {"message": message, "documents": [{"id": i} for i in ids]}}

    answerable = Question("a", "Where is Normandy?", ["France"], False, "p1")
    impossible = Question("b", "Where is Narnia?", [], True, "p1")
    outcomes = [
        score(answerable, body("France [Normans]", ["p1"]), 0.2),
        score(answerable, body(NOT_FOUND, ["p2"]), 0.4),
        score(impossible, body(NOT_FOUND, ["p1"]), 0.1),
        score(impossible, body("Narnia is in France. [Normans]", ["p1"]), 0.3),
    ]
    r = report(outcomes)
    assert (r.answerable, r.unanswerable) == (2, 2)
    assert r.exact_match == 0.5 and r.f1 == 0.5 and r.answer_contains_gold == 0.5
    assert r.false_abstention == 0.5 and r.abstention_accuracy == 0.5
    assert r.gold_paragraph_hit == 0.5
    assert r.mean_latency_s == pytest.approx(0.25)


def _body(message: str, ids: list[str]) -> dict:
    return {"status": "OK", "content": {"message": message, "documents": [{"id": i} for i in ids]}}


def test_the_gold_paragraph_is_counted_at_the_same_k_whatever_the_mode_sends() -> None:
    """bm25 sends 3 documents, rrf about 10: the gold paragraph at rank 7 is 'sent' but not in the
    first 3, so the modes compare at equal k."""
    question = Question("a", "Where is Normandy?", ["France"], False, "gold")
    bm25 = score(question, _body("France [1]", ["gold", "x", "y"]), 0.1)
    rrf = score(question, _body("France [7]", [*(f"o{i}" for i in range(6)), "gold", "p", "q", "r"]), 0.1)
    assert (bm25.gold_rank, rrf.gold_rank) == (1, 7) and bm25.gold_hit and rrf.gold_hit
    r = report([bm25, rrf])
    assert r.gold_paragraph_hit == 1.0 and r.gold_in_first_k == 0.5 and r.mean_sources == 6.5
    assert "gold paragraph among the first 3 sources" in table(r) and "6.5 sources on average" in table(r)


def test_a_set_without_unanswerable_questions_says_so_instead_of_nan() -> None:
    question = Question("a", "Where is Normandy?", ["France"], False)
    r = report([score(question, _body("France", ["p"]), 0.1)])
    text = table(r)
    assert not re.search(r"\bnan\b", text.lower()) and "n/a (no unanswerable question)" in text
    data = as_json(r)
    assert data["abstention_accuracy"] is None and json.loads(json.dumps(data, allow_nan=False))


@pytest.mark.parametrize("sentence", sorted(ABSTENTIONS.values()))
def test_every_abstention_sentence_of_the_prompts_is_recognised(sentence: str) -> None:
    assert abstained("OK", None, sentence)


def test_confidence_is_reported_for_right_and_wrong_answers_apart() -> None:
    """Whether the answers' confidence tells right from wrong: its mean on each side."""
    answerable = Question("a", "Where is Normandy?", ["France"], False, "p1")
    impossible = Question("b", "Where is Narnia?", [], True, "p1")

    def body(message: str, confidence: float) -> dict:
        return {"status": "OK", "content": {"message": message, "documents": [], "confidence": confidence}}

    outcomes = [
        score(answerable, body("In France [1].", 0.9), 0.1),
        score(answerable, body("In Spain [1].", 0.3), 0.1),
        score(impossible, body("Narnia is in France [1].", 0.1), 0.1),
        score(impossible, body(NOT_FOUND, 0.0), 0.1),  # an abstention is neither
    ]
    r = report(outcomes)
    assert r.confidence_right == pytest.approx(0.9) and r.confidence_wrong == pytest.approx(0.2)
    assert "mean confidence: right answers" in table(r) and "90.0" in table(r)
    assert "n/a (none)" in table(report([score(answerable, _body("France", ["p"]), 0.1)]))  # no confidence sent
