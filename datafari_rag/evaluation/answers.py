"""``datafari-rag eval answers``: how well ``ai/rag`` answers, and abstains, on a corpus of your own.

The corpus (``corpus.jsonl``, BEIR format) is indexed through the real indexer into collections
of its own; a sample of ``qa.jsonl`` (``question``, ``answers``, ``is_impossible``, optional
``gold_doc_id``) is asked through the sidecar's own ``ai/rag`` endpoint with the configured LLM.

Scores follow the official SQuAD 2.0 evaluation script (answer normalisation, exact match, token
F1, best over the gold answers). Because a RAG answer is a sentence rather than a span, the share
of answers that *contain* a gold answer is reported too. An answer counts as an abstention when
the API reports that nothing was found (``ragNoFileFound``, ``ragNoValidAnswer``) or when its text
matches :data:`ABSTENTION` — the sentence the prompts ask for ("I could not find the answer in the
documents.") and the usual ways an LLM words the same thing.
"""

from __future__ import annotations

import collections
import math
import random
import re
import statistics
import string
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from flask import Flask
from tqdm import tqdm

from ..prompts import ABSTENTIONS
from . import missing_field, read_jsonl

ABSTENTION = re.compile(
    r"\b(could ?n[o']t|can ?n[o']t|cannot|unable to|do(?:es)? ?n[o']t|did ?n[o']t|not able to) "
    r"(find|locate|provide|contain|mention|include|give|have|know)\b[^.\n]{0,60}"
    r"\b(answer|information|documents?|context|texts?|sources?)\b"
    r"|\bno (answer|relevant information)\b"
    r"|\bnot (mentioned|stated|provided|specified|found) in the (documents?|context|texts?|sources?)\b"
    # the sentence the prompts ask for, in every language they have it (prompts/__init__.py)
    + "".join(f"|{re.escape(sentence.rstrip('.'))}" for sentence in ABSTENTIONS.values()),
    re.IGNORECASE,
)
GOLD_K = 3  # the gold paragraph is looked for among the first K sources, whatever the mode sends
NOTHING_FOUND = {"ragNoFileFound", "ragNoValidAnswer"}
_CITATION = re.compile(r"\s*\[[^\[\]\n]*\]\s*$", re.MULTILINE)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


@dataclass
class Question:
    id: str
    question: str
    answers: list[str]
    is_impossible: bool
    gold_doc_id: str | None = None
    withheld: bool = False  # its gold paragraph was left out of the index: unanswerable from it


@dataclass
class Outcome:
    """What ``ai/rag`` answered to one question, scored."""

    id: str
    is_impossible: bool
    status: str
    label: str | None
    answer: str
    documents: list[str]
    seconds: float
    abstained: bool
    exact: float = 0.0
    f1: float = 0.0
    contains: bool = False
    gold_hit: bool | None = None  # the gold paragraph's document was sent to the LLM
    gold_rank: int | None = None  # its place among the sources (1 first), 0 when not sent
    confidence: float | None = None  # the answer's own confidence (docs/strategies.md)
    withheld: bool = False


@dataclass
class Point:
    """Abstention as if answers below ``threshold`` of confidence were abstentions (rag.minConfidence)."""

    threshold: float
    abstention_accuracy: float
    false_abstention: float


@dataclass
class Report:
    questions: int
    answerable: int
    unanswerable: int
    exact_match: float
    f1: float
    answer_contains_gold: float
    false_abstention: float
    abstention_accuracy: float
    gold_paragraph_hit: float
    gold_in_first_k: float  # at the same K for every mode: modes send different numbers of sources
    mean_sources: float
    errors: int
    mean_latency_s: float
    p50_latency_s: float
    confidence_right: float = float("nan")  # mean confidence of answers holding a gold answer
    confidence_wrong: float = float("nan")  # … of answers that should have been another or none
    confidence_auc: float = float("nan")  # chance a right answer's confidence beats a wrong one's
    # by what was sent: unanswerable from the sources when its gold paragraph was not among them
    abstention_unsent: float = float("nan")
    false_abstention_sent: float = float("nan")
    withheld: int = 0  # unanswerable because their gold paragraph was left out of the index
    curve: list[Point] = field(default_factory=list)
    outcomes: list[Outcome] = field(repr=False, default_factory=list)


def load_qa(folder: Path) -> tuple[list[dict[str, Any]], list[Question]]:
    corpus = read_jsonl(folder / "corpus.jsonl")
    qa_file = folder / "qa.jsonl"
    try:
        questions = [
            Question(
                id=str(q["id"]),
                question=q["question"],
                answers=[a for a in q.get("answers") or [] if a.strip()],
                is_impossible=bool(q.get("is_impossible")),
                gold_doc_id=q.get("gold_doc_id"),
            )
            for q in read_jsonl(qa_file)
        ]
    except KeyError as exc:
        raise missing_field(qa_file, exc) from exc
    return corpus, questions


def withhold_gold(
    corpus: list[dict[str, Any]], questions: list[Question], share: float, seed: int
) -> tuple[list[dict[str, Any]], list[Question]]:
    """Leaves a seeded ``share`` of the asked questions' gold paragraphs out of the corpus: their
    questions become unanswerable from it (the right output is the abstention), which makes a set
    without unanswerable questions (PIAF) measure abstention where the answer was not sent."""
    golds = sorted({q.gold_doc_id for q in questions if q.gold_doc_id and not q.is_impossible})
    if share <= 0 or not golds:
        return corpus, questions
    left_out = set(random.Random(seed).sample(golds, round(share * len(golds))))
    kept = [d for d in corpus if str(d["_id"]) not in left_out]
    marked = [
        replace(q, is_impossible=True, answers=[], withheld=True) if q.gold_doc_id in left_out else q for q in questions
    ]
    return kept, marked


def sample(questions: list[Question], size: int | None, seed: int) -> list[Question]:
    """A reproducible random sample (the file order groups questions by article)."""
    if size is None or size >= len(questions):
        return questions
    return random.Random(seed).sample(questions, size)


# --- the official SQuAD 2.0 scoring ---------------------------------------------------------


def normalize_answer(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces (SQuAD's ``normalize_answer``)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: str, gold: str) -> float:
    predicted, expected = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not predicted or not expected:
        return float(predicted == expected)
    common = sum((collections.Counter(predicted) & collections.Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def contains_answer(prediction: str, gold: str) -> bool:
    expected = normalize_answer(gold)
    return bool(expected) and f" {expected} " in f" {normalize_answer(prediction)} "


def answer_text(message: str) -> str:
    """The answer without its trailing source citations (``… [Title]``), which are not part of it."""
    return _CITATION.sub("", message).strip()


def abstained(status: str, label: str | None, message: str) -> bool:
    return (status == "ERROR" and label in NOTHING_FOUND) or bool(ABSTENTION.search(message))


def score(question: Question, body: dict[str, Any], seconds: float) -> Outcome:
    content = body.get("content") or {}
    label = (content.get("error") or {}).get("label")
    message = content.get("message") or ""
    outcome = Outcome(
        id=question.id,
        is_impossible=question.is_impossible,
        status=body.get("status", "ERROR"),
        label=label,
        answer=message,
        documents=[str(d.get("id")) for d in content.get("documents") or []],
        seconds=seconds,
        abstained=abstained(body.get("status", "ERROR"), label, message),
        confidence=content.get("confidence") if isinstance(content.get("confidence"), int | float) else None,
        withheld=question.withheld,
    )
    if question.gold_doc_id:
        outcome.gold_hit = question.gold_doc_id in outcome.documents
        outcome.gold_rank = outcome.documents.index(question.gold_doc_id) + 1 if outcome.gold_hit else 0
    if not question.is_impossible and question.answers and outcome.status == "OK" and not outcome.abstained:
        text = answer_text(message)
        outcome.exact = max(exact_match(text, a) for a in question.answers)
        outcome.f1 = max(token_f1(text, a) for a in question.answers)
        outcome.contains = any(contains_answer(text, a) for a in question.answers)
    return outcome


# --- asking ----------------------------------------------------------------------------------


def ask_all(app: Flask, questions: list[Question], concurrency: int = 1, lang: str | None = None) -> Iterator[Outcome]:
    """Asks each question through the app's ``ai/rag`` endpoint, as a Datafari UI would; ``lang``
    is the request's (the prompt's language and its abstention sentence)."""
    path = app.extensions["datafari_rag"].settings.api_prefix.rstrip("/") + "/ai/rag"
    extra = {"lang": lang} if lang else {}

    def ask(question: Question) -> Outcome:
        began = time.perf_counter()
        response = app.test_client().post(path, json={"query": question.question, **extra})
        return score(question, response.get_json(silent=True) or {}, time.perf_counter() - began)

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        yield from tqdm(pool.map(ask, questions), total=len(questions), unit="question", desc="asking")


def technical_failure(outcome: Outcome) -> bool:
    return outcome.status == "ERROR" and outcome.label not in NOTHING_FOUND


def report(outcomes: list[Outcome]) -> Report:
    answerable = [o for o in outcomes if not o.is_impossible]
    unanswerable = [o for o in outcomes if o.is_impossible]
    with_gold = [o for o in answerable if o.gold_hit is not None]

    def mean(values: list[float]) -> float:
        return statistics.fmean(values) if values else float("nan")

    seconds = [o.seconds for o in outcomes]
    answered = [o for o in outcomes if o.status == "OK" and not o.abstained and o.confidence is not None]
    right = [o.confidence for o in answered if not o.is_impossible and o.contains]
    wrong = [o.confidence for o in answered if o.is_impossible or not o.contains]
    return Report(
        questions=len(outcomes),
        answerable=len(answerable),
        unanswerable=len(unanswerable),
        exact_match=mean([o.exact for o in answerable]),
        f1=mean([o.f1 for o in answerable]),
        answer_contains_gold=mean([float(o.contains) for o in answerable]),
        false_abstention=mean([float(o.abstained) for o in answerable]),
        abstention_accuracy=mean([float(o.abstained) for o in unanswerable]),
        gold_paragraph_hit=mean([float(bool(o.gold_hit)) for o in with_gold]),
        gold_in_first_k=mean([float(0 < (o.gold_rank or 0) <= GOLD_K) for o in with_gold]),
        mean_sources=mean([float(len(o.documents)) for o in answerable if o.status == "OK"]),
        errors=sum(technical_failure(o) for o in outcomes),
        mean_latency_s=mean(seconds),
        p50_latency_s=statistics.median(seconds) if seconds else float("nan"),
        confidence_right=mean([c for c in right if c is not None]),
        confidence_wrong=mean([c for c in wrong if c is not None]),
        confidence_auc=auc([c for c in right if c is not None], [c for c in wrong if c is not None]),
        abstention_unsent=mean([float(o.abstained) for o in outcomes if o.gold_hit is False or o.is_impossible]),
        false_abstention_sent=mean([float(o.abstained) for o in answerable if o.gold_hit]),
        withheld=sum(o.withheld for o in outcomes),
        curve=curve(outcomes),
        outcomes=outcomes,
    )


THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(21))


def curve(outcomes: list[Outcome]) -> list[Point]:
    """Abstention accuracy and false abstention for each confidence threshold: an answer whose
    confidence is below it counts as abstained, as ``rag.minConfidence`` would make it (computed
    from one run: the threshold changes nothing else)."""
    answerable = [o for o in outcomes if not o.is_impossible]
    unanswerable = [o for o in outcomes if o.is_impossible]
    if not answerable or not unanswerable:
        return []

    def abstains(o: Outcome, threshold: float) -> bool:
        below = o.status == "OK" and o.confidence is not None and o.confidence < threshold
        return o.abstained or below

    return [
        Point(
            t,
            statistics.fmean(abstains(o, t) for o in unanswerable),
            statistics.fmean(abstains(o, t) for o in answerable),
        )
        for t in THRESHOLDS
    ]


def auc(positives: list[float], negatives: list[float]) -> float:
    """The chance that a positive scores above a negative (ties count half): the ROC curve's area."""
    if not positives or not negatives:
        return float("nan")
    above = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return above / (len(positives) * len(negatives))


def _percent(value: float, missing: str) -> str:
    """A share as a percentage; a share of nothing says why there is none (never ``nan``)."""
    return f"n/a ({missing})" if math.isnan(value) else f"{100 * value:.1f}"


def table(r: Report) -> str:
    rows = [
        ("questions (answerable / unanswerable)", f"{r.questions} ({r.answerable} / {r.unanswerable})"),
        ("exact match (answerable)", _percent(r.exact_match, "no answerable question")),
        ("token F1 (answerable)", _percent(r.f1, "no answerable question")),
        ("answer contains a gold answer", _percent(r.answer_contains_gold, "no answerable question")),
        ("false abstention (answerable)", _percent(r.false_abstention, "no answerable question")),
        ("abstention accuracy (unanswerable)", _percent(r.abstention_accuracy, "no unanswerable question")),
        ("abstention accuracy (gold paragraph not sent)", _percent(r.abstention_unsent, "always sent")),
        ("false abstention (gold paragraph sent)", _percent(r.false_abstention_sent, "never sent")),
        (f"gold paragraph among the first {GOLD_K} sources", _percent(r.gold_in_first_k, "no gold paragraph")),
        (
            f"gold paragraph sent at all ({r.mean_sources:.1f} sources on average)"
            if not math.isnan(r.mean_sources)
            else "gold paragraph sent at all",
            _percent(r.gold_paragraph_hit, "no gold paragraph"),
        ),
        ("mean confidence: right answers", _percent(r.confidence_right, "none")),
        ("mean confidence: wrong answers", _percent(r.confidence_wrong, "none")),
        ("confidence AUC, right vs wrong answers", _percent(r.confidence_auc, "needs both")),
        ("technical errors", str(r.errors)),
        ("latency mean / p50 (s)", f"{r.mean_latency_s:.3f} / {r.p50_latency_s:.3f}"),
    ]
    if r.withheld:
        rows.insert(1, ("  of which unanswerable: gold paragraph withheld", str(r.withheld)))
    width = max(len(name) for name, _ in rows)
    lines = [f"{name:<{width}}  {value:>12}" for name, value in rows]
    if r.curve:
        lines.append("rag.minConfidence  abstention accuracy  false abstention")
        lines += [
            f"{p.threshold:>17.2f}  {100 * p.abstention_accuracy:>19.1f}  {100 * p.false_abstention:>16.1f}"
            for p in r.curve
        ]
    return "\n".join(lines)


def as_json(r: Report) -> dict[str, Any]:
    """The report as JSON: a share of nothing is ``null`` (NaN is not JSON)."""
    data = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(r).items()}
    data["outcomes"] = [asdict(o) for o in r.outcomes]
    return data
