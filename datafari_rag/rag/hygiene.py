"""Cleaning what goes into a prompt: the user's query and the documents' text.

The query loses control characters and the characters that have a meaning in Solr's syntax or
in our prompt markup, and is capped at 500 characters; letters of every language (accents
included) stay. Snippets keep their text but cannot close or open our markup, and lose runs of
blank space (spaces, empty lines) that only cost tokens; tabs stay (table cells). Accents go only when
``prompt.stripAccents`` asks (Datafari's sanitizing option; off, as French needs them).
"""

from __future__ import annotations

import re
import unicodedata

QUERY_MAX_CHARS = 500
HISTORY_MESSAGE_MAX_CHARS = 2000
_QUERY_SPECIAL = re.compile(r'[<>{}\[\]\\"`|^~*]')
_MARKUP = str.maketrans({"<": "‹", ">": "›", '"': "'", "`": "'"})


# Control, format (zero-width, bidi overrides), surrogate and private-use characters;
# tab and line breaks are not among them.
_CONTROLS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff\ue000-\uf8ff\U000e0000-\U000e007f]"
)


def _without_controls(text: str) -> str:
    """``text`` without invisible characters; tabs and line breaks stay."""
    return _CONTROLS.sub("", text).replace("\r\n", "\n").replace("\r", "\n")


_SPACES = re.compile(r"[ \f\v\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_BLANK_LINES = re.compile(r"\n\s*\n\s*(?:\n\s*)+")


def strip_accents(text: str) -> str:
    """``text`` without diacritics ("é" → "e"); other letters and scripts stay."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn"))


def clean_query(query: str, accents: bool = True) -> str:
    """The query as it may appear in a prompt (without accents when ``accents`` is false)."""
    text = unicodedata.normalize("NFC", _without_controls(query))
    text = _QUERY_SPECIAL.sub(" ", text if accents else strip_accents(text))
    return " ".join(text.split())[:QUERY_MAX_CHARS].strip()


def clean_snippet(text: str, accents: bool = True) -> str:
    """Document text as it may appear between our markup: no markup, no quotes, no controls,
    no runs of blank space."""
    text = _without_controls(unicodedata.normalize("NFC", text)).translate(_MARKUP)
    text = _BLANK_LINES.sub("\n\n", _SPACES.sub(" ", text if accents else strip_accents(text)))
    return "\n".join(line.strip(" ") for line in text.split("\n")).strip()


def clean_history(history: list[dict[str, str]], size: int, accents: bool = True) -> list[dict[str, str]]:
    """The last ``size`` messages of a conversation, each cleaned like snippet text and capped."""
    if size <= 0:
        return []
    return [
        {"role": m["role"], "content": clean_snippet(m["content"], accents)[:HISTORY_MESSAGE_MAX_CHARS]}
        for m in history[-size:]
    ]
