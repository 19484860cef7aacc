"""The answer as it is shown: its text cleaned, the sources it cites (``references``, and
``citations`` with excerpt and score), its confidence and what it rests on, the reasoning steps,
and the abstention sentence in its place when the confidence is below ``rag.minConfidence``."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import DatafariError
from ..llm import Usage
from ..retrieval import Snippet
from .citations import citations, clean_answer, references
from .confidence import confidence, is_abstention
from .turn import Event

QUALITY_KEYS = ("citations", "confidence", "confidence_basis", "reasoning_steps")


@dataclass(frozen=True)
class Evidence:
    """What an answer is judged on: the passages sent (url, text, score), the abstention sentence
    asked for, the reasoning steps, and the faithfulness check's verdict (reflect)."""

    passages: list[tuple[str, str, float]]
    abstention: str
    steps: list[str] = field(default_factory=list)
    faithfulness: float | None = None
    relevance: float | None = None  # the chance the answer answers the question (rag.confidence.relevance)
    min_confidence: float = 0.0  # below it (the relevance weighed) the abstention sentence is shown


def finished(
    raw: str, sources: list[dict[str, Any]], usage: Usage, started: float, lang: str | None, evidence: Evidence
) -> Event:
    """``message.final``: the answer as shown, its usage, the sources it cites (``references``, and
    ``citations`` with excerpt and score), its confidence, reasoning steps and latency."""
    text = clean_answer(raw)
    if not text:
        raise DatafariError("ragNoValidAnswer", "The LLM returned an empty answer.", lang=lang)
    latency_ms = int((time.monotonic() - started) * 1000)
    texts = [p[1] for p in evidence.passages]
    abstained = is_abstention(text, evidence.abstention)
    score, basis = confidence(text, texts, evidence.faithfulness, abstained, evidence.relevance)
    cited, steps = references(raw, sources), evidence.steps
    excerpts = citations(raw, sources, evidence.passages)
    # not sure enough: say so instead; only a confidence that weighs the relevance is calibrated for it
    if texts and not abstained and evidence.relevance is not None and score < evidence.min_confidence:
        text, cited, excerpts = evidence.abstention, [], []
        steps = [*steps, f"confidence {score} below rag.minConfidence {evidence.min_confidence}: abstained"]
    data = {
        "text": text,
        "usage": usage.as_dict(),
        "references": cited,
        "citations": excerpts,
        "confidence": score,
        "confidence_basis": basis,
        "reasoning_steps": steps,
        "latency_ms": latency_ms,
    }
    return Event("message.final", data)


def sources(snippets: list[Snippet]) -> list[dict[str, str]]:
    """What was sent to the LLM, one entry per url (the first chunk's text as content)."""
    seen: dict[str, dict[str, str]] = {}
    for x in snippets:
        seen.setdefault(x.url, {"id": x.id, "title": x.title, "url": x.url, "content": x.content})
    return list(seen.values())
