"""A question's own words and how much of them a text holds, in English and French (no model):
the local generator cites a sentence only if it holds enough of them, and an answer's confidence
counts how much of the question it answers with."""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"\w+")
_STOP_WORDS = (  # English and French, folded below as the words they are compared with
    """a an the of in on at to for by with from and or not no is are was were be been being am what which who
    whom whose when where why how did do does done that this these those it its as into than then there their
    they them he she his her him we our you your i my me can could would should will shall may might has have
    had about after before over under between during any some all each most more many much other such only
    own same so too very just also de la le les des du un une et ou ni est sont qui que quoi quel quelle quels
    quelles ou où quand comment pourquoi combien dans sur sous pour par avec sans en au aux ce cet cette ces
    il elle ils elles on nous vous je tu son sa ses leur leurs mon ma mes ton ta tes notre nos votre vos a été
    était étaient ont avait avaient fut furent être avoir fait faire plus moins très aussi ne pas se s l d qu
    n y c j m t"""
)


def _fold(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word.lower()) if not unicodedata.combining(c))


STOP_WORDS = frozenset(map(_fold, _STOP_WORDS.split()))


def content_words(text: str) -> list[str]:
    """The words that carry meaning: lower-cased, accents folded, stop words (English, French) and
    single letters left out."""
    folded = (_fold(w) for w in _WORD.findall(text))
    return [w for w in folded if len(w) > 1 and w not in STOP_WORDS]


def support(question: list[str], sentence: str) -> float:
    """The share of the question's words the sentence holds (on their first five letters: plural,
    gender and conjugation aside); 1 when the question has no word to look for."""
    if not question:
        return 1.0
    held = {w[:5] for w in content_words(sentence)}
    return sum(w[:5] in held for w in question) / len(question)
