"""The answer's ``confidence``, in [0, 1]: how much of the answer the sources sent support.

- with ``rag.strategy=reflect``, the last faithfulness check's share of supported statements
  (``confidence_basis``: ``faithfulness-check``);
- otherwise the lexical support (``lexical-support``): the share of the answer's sentences whose
  content words (four letters or more, common words aside) are at least 60 % in the sources' text.

An abstention, or an answer without sources, has confidence 0: nothing in the sources supports an
answer.
"""

from __future__ import annotations

import re

from .citations import cited_numbers
from .lexical import content_words, sentences

SUPPORTED = 0.6
_CITATION = re.compile(r"\[\d{1,3}(?:\s*,\s*\d{1,3})*\]")


def lexical_support(answer: str, passages: list[str]) -> float:
    known = content_words(" ".join(passages))
    scores: list[bool] = []
    for sentence in sentences(_CITATION.sub(" ", answer)):
        words = content_words(sentence)
        if words:
            scores.append(len(words & known) / len(words) >= SUPPORTED)
    return round(sum(scores) / len(scores), 3) if scores else 0.0


def confidence(answer: str, passages: list[str], faithfulness: float | None, abstained: bool) -> tuple[float, str]:
    """(confidence, basis)."""
    if abstained or not passages:
        return 0.0, "no-support"
    if faithfulness is not None:
        return round(faithfulness, 3), "faithfulness-check"
    return lexical_support(answer, passages), "lexical-support"


def is_abstention(answer: str, sentence: str) -> bool:
    """The answer is the abstention sentence the prompts ask for (citations aside)."""
    plain = _CITATION.sub("", answer).strip().rstrip(".").lower()
    return bool(sentence) and plain == sentence.strip().rstrip(".").lower() and not cited_numbers(answer)
