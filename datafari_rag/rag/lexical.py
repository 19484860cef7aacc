"""Words and sentences, as the lexical measures of the answer path count them (no model)."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_COMMON_WORDS = (  # English and French words too common to say what a sentence is about
    "that this with from have were what when which their there they them then than also into about "
    "been each more most other such only some very will would could should these those your does "
    "dans pour avec sont être nous vous leur leurs cette ces elle elles mais plus tout tous comme "
    "fait faire peut sans sous entre"
)
_COMMON = frozenset(_COMMON_WORDS.split())


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def content_words(text: str) -> set[str]:
    """The words of four letters or more that say what a text is about."""
    return {w for w in words(text) if len(w) >= 4 and w not in _COMMON}


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]
