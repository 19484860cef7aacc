"""The answer's ``confidence``, in [0, 1]: how much of the answer the sources sent support, times
how likely it is to answer the question.

- with ``rag.strategy=reflect``, the last faithfulness check's share of supported statements
  (``confidence_basis``: ``faithfulness-check``);
- otherwise the lexical support (``lexical-support``): the share of the answer's sentences whose
  content words (four letters or more, common words aside) are at least 60 % in the sources' text;
- with ``rag.confidence.relevance`` (``…+relevance``), times the chance that the answer is right
  given how close its embedding is to the question's and how much of the question's words it
  holds: a logistic regression fitted on answers to SQuAD 2.0's and PIAF's development halves
  (``bench/calibrate_confidence.py``). Support alone says an answer stays within its sources, not
  that it answers: an extractive answer is always fully supported.

An abstention, or an answer without sources, has confidence 0: nothing in the sources supports an
answer.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..words import content_words as question_words
from ..words import support
from .citations import cited_numbers, clean_answer
from .lexical import content_words, sentences

log = logging.getLogger(__name__)
SUPPORTED = 0.6
# (intercept, cosine, share of the question's words) of P(right): fitted on 1,000 answers of the
# local generator (bge-small-en-v1.5 cosines) by bench/calibrate_confidence.py
RELEVANCE = (-9.865, 9.641, 2.891)
_CITATION = re.compile(r"\[\d{1,3}(?:\s*,\s*\d{1,3})*\]")
_CITED = re.compile(r"\s*" + _CITATION.pattern)


def lexical_support(answer: str, passages: list[str]) -> float:
    known = content_words(" ".join(passages))
    scores: list[bool] = []
    for sentence in sentences(_CITATION.sub(" ", answer)):
        words = content_words(sentence)
        if words:
            scores.append(len(words & known) / len(words) >= SUPPORTED)
    return round(sum(scores) / len(scores), 3) if scores else 0.0


def uncited(answer: str) -> str:
    """The answer without its citation numbers ([1], [2, 3])."""
    return _CITED.sub("", answer).strip()


def relevance(question: str, answer: str, embed: Callable[[list[str]], list[list[float]]]) -> float:
    """The chance that ``answer`` answers ``question`` (see the module's docstring); raises what
    ``embed`` raises."""
    plain = uncited(answer)
    asked, said = embed([question, plain])
    norms = math.hypot(*asked) * math.hypot(*said)
    cosine = sum(a * b for a, b in zip(asked, said, strict=True)) / norms if norms else 0.0
    intercept, by_cosine, by_words = RELEVANCE
    z = intercept + by_cosine * cosine + by_words * support(question_words(question), plain)
    return 1 / (1 + math.exp(-z))


def confidence(
    answer: str, passages: list[str], faithfulness: float | None, abstained: bool, relevant: float | None = None
) -> tuple[float, str]:
    """(confidence, basis); ``relevant``: :func:`relevance`, when measured."""
    if abstained or not passages:
        return 0.0, "no-support"
    if faithfulness is not None:
        score, basis = faithfulness, "faithfulness-check"
    else:
        score, basis = lexical_support(answer, passages), "lexical-support"
    if relevant is None:
        return round(score, 3), basis
    return round(score * relevant, 3), f"{basis}+relevance"


def is_abstention(answer: str, sentence: str) -> bool:
    """The answer is the abstention sentence the prompts ask for (citations aside)."""
    plain = _CITATION.sub("", answer).strip().rstrip(".").lower()
    return bool(sentence) and plain == sentence.strip().rstrip(".").lower() and not cited_numbers(answer)


@dataclass(frozen=True)
class AnswerRelevance:
    """``rag.confidence.relevance``: how likely an answer answers its question, with ``embed`` (the
    chunks' model); none when not weighed (``embed`` None), for an abstention, or when the embedding
    service fails (the confidence then rests on the sources' support alone, as the log says)."""

    embed: Callable[[list[str]], list[list[float]]] | None

    def __call__(self, question: str, raw: str, abstention: str) -> float | None:
        text = clean_answer(raw)
        if self.embed is None or not text or is_abstention(text, abstention):
            return None
        try:
            return relevance(question, text, self.embed)
        except RuntimeError as exc:  # the embedding service's EmbeddingError is one
            log.warning("the answer's relevance not measured, its confidence is its support only: %s", exc)
            return None
