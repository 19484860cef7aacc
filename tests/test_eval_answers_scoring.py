"""SQuAD 2.0 scoring and abstention detection of `datafari-rag eval answers`, on fixed examples."""

from __future__ import annotations

import pytest

from datafari_rag.agent.extractive import NOT_FOUND
from datafari_rag.evaluation.answers import (
    Question,
    abstained,
    answer_text,
    contains_answer,
    exact_match,
    normalize_answer,
    report,
    score,
    token_f1,
)


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
