"""A document's language when its writer sent none, for Datafari's ``language`` field.

py3langid (its model ships inside the package) reads the first characters of the text; a guess
below ``MIN_CONFIDENCE``, or on too few letters, leaves the field out rather than mislabel the
document (a wrong ``fr`` would analyse English text with the French chain).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from py3langid.langid import MODEL_FILE, LanguageIdentifier

SAMPLE_CHARS = 2000
MIN_LETTERS = 20
MIN_CONFIDENCE = 0.9


@cache
def _identifier() -> LanguageIdentifier:
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def detect(text: str) -> str | None:
    """The ISO 639-1 code of ``text``'s language, or None when it cannot be told."""
    sample = text[:SAMPLE_CHARS]
    if sum(ch.isalpha() for ch in sample) < MIN_LETTERS:
        return None
    code, confidence = _identifier().classify(sample)
    return str(code) if confidence >= MIN_CONFIDENCE else None


def with_language(doc: dict[str, Any], text: str) -> dict[str, Any]:
    """The document with its detected ``language`` when it has none (a sent one is kept)."""
    if doc.get("language"):
        return doc
    found = detect(text)
    return {**doc, "language": found} if found else doc
