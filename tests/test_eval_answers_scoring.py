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
    auc,
    contains_answer,
    exact_match,
    normalize_answer,
    report,
    score,
    table,
    token_f1,
    withhold_gold,
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


def test_the_curve_counts_answers_below_each_threshold_as_abstentions_and_the_auc_ranks_them() -> None:
    """From one run: rag.minConfidence t turns every answer below t into an abstention; the AUC is
    the chance a right answer's confidence beats a wrong one's (ties half)."""
    answerable = Question("a", "Where is Normandy?", ["France"], False, "p1")
    impossible = Question("b", "Where is Narnia?", [], True, "p1")

    def body(message: str, confidence: float) -> dict:
        return {"status": "OK", "content": {"message": message, "documents": [], "confidence": confidence}}

    r = report(
        [
            score(answerable, body("In France [1].", 0.8), 0.1),
            score(answerable, body("In France, surely [1].", 0.4), 0.1),
            score(impossible, body("Narnia is in France [1].", 0.3), 0.1),
            score(impossible, body(NOT_FOUND, 0.0), 0.1),
        ]
    )
    points = {p.threshold: (p.abstention_accuracy, p.false_abstention) for p in r.curve}
    assert points[0.0] == (0.5, 0.0)  # only the real abstention
    assert points[0.35] == (1.0, 0.0)  # the wrong answer (0.3) now abstained, both right ones kept
    assert points[0.5] == (1.0, 0.5) and points[1.0] == (1.0, 1.0)
    assert r.confidence_auc == pytest.approx(1.0)  # right 0.8 and 0.4 both above wrong 0.3
    assert "rag.minConfidence" in table(r) and json.loads(json.dumps(as_json(r), allow_nan=False))["curve"]
    assert auc([0.5], [0.5]) == 0.5 and auc([0.2], [0.7]) == 0.0


def test_withholding_gold_paragraphs_makes_their_questions_unanswerable() -> None:
    corpus = [{"_id": f"p{i}", "title": "", "text": f"paragraph {i}"} for i in range(4)]
    questions = [Question(f"q{i}", f"question {i}?", ["x"], False, f"p{i % 4}") for i in range(8)]
    kept, marked = withhold_gold(corpus, questions, 0.5, seed=3)
    gone = {d["_id"] for d in corpus} - {d["_id"] for d in kept}
    assert len(gone) == 2
    for q in marked:
        assert q.withheld == q.is_impossible == (q.gold_doc_id in gone) and (q.answers == []) == q.withheld
    assert withhold_gold(corpus, questions, 0.5, seed=3) == (kept, marked)  # the seed decides
    assert withhold_gold(corpus, questions, 0.0, seed=3) == (corpus, questions)
    r = report([score(q, _body("x", []), 0.1) for q in marked])
    assert r.withheld == 4 and "gold paragraph withheld" in table(r)
    # by what was sent: the answerable ones' gold paragraph sent to half of them, none abstained
    sent = [score(q, _body("x", [q.gold_doc_id] if i % 2 else []), 0.1) for i, q in enumerate(marked)]
    assert report(sent).false_abstention_sent == 0.0 and report(sent).abstention_unsent == 0.0
    abstaining = [score(q, _body(NOT_FOUND, []), 0.1) for q in marked]
    assert report(abstaining).abstention_unsent == 1.0 and "gold paragraph not sent" in table(report(abstaining))
