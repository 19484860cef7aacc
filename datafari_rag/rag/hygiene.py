"""Cleaning what goes into a prompt: the user's query and the documents' text.

The query loses control characters and the characters that have a meaning in Solr's syntax or
in our prompt markup, and is capped at 500 characters; letters of every language (accents
included) stay. Snippets keep their text but cannot close or open our markup, and lose runs of
blank space (spaces, empty lines) that only cost tokens; tabs stay (table cells). Accents go only when
``prompt.stripAccents`` asks (Datafari's sanitizing option; off, as French needs them).

``prompt.cleaning=datafari`` applies Datafari 6.2's own rules instead (its ``sanitizeInput`` and
``cleanContext``), for a deployment whose prompts were written for them: the query loses its accents
and Solr's operators (``+ && || { } [ ] ^ ~ * \\ < > = #``); document text has ``\\`` turned into ``/``,
line breaks written as ``\\n``, ``'''`` and ``######`` (6.2's prompt separator) removed and ``"`` turned
into a backquote — but keeps ``<`` and ``>``, so a document can write our markup. The product's rules
(``strict``, the default) are the safer ones.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Settings

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


# Datafari 6.2's sanitizeInput: these become spaces (Solr's operators, and markup)
_DATAFARI_QUERY_SPECIAL = ("+", "&&", "||", "{", "}", "[", "]", "\n", "^", "~", "*", "\\", "<", ">", "=", "#")
_DATAFARI_CONTEXT = (
    ("\\", "/"),
    ("\n", "\\n"),
    ("\r", " "),
    ("\t", " "),
    ("\b", ""),
    ("'''", ""),
    ("######", ""),  # 6.2's separator in its prompts
    ('"', "`"),
)
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")  # Java's \p{Cntrl}


def datafari_query(query: str) -> str:
    """Datafari 6.2's ``sanitizeInput``, rule for rule."""
    text = strip_accents(query.strip())
    text = _CONTROL_CHARS.sub(" ", text)
    for special in _DATAFARI_QUERY_SPECIAL:
        text = text.replace(special, " ")
    return re.sub(r"\s+", " ", text)[:QUERY_MAX_CHARS].strip()


def datafari_context(text: str) -> str:
    """Datafari 6.2's ``cleanContext``, rule for rule."""
    for old, new in _DATAFARI_CONTEXT:
        text = text.replace(old, new)
    return text


CLEANING_RULES = ("strict", "datafari")


@dataclass(frozen=True)
class Hygiene:
    """How text is cleaned before it enters a prompt: ``prompt.cleaning`` and ``prompt.stripAccents``."""

    rules: str = "strict"
    accents: bool = True

    @classmethod
    def of(cls, settings: Settings) -> Hygiene:
        return cls(settings.prompt_cleaning, not settings.strip_accents)

    def query(self, query: str) -> str:
        if self.rules == "datafari":
            return datafari_query(query)
        return clean_query(query, self.accents)

    def snippet(self, text: str) -> str:
        if self.rules == "datafari":
            return datafari_context(text if self.accents else strip_accents(text))
        return clean_snippet(text, self.accents)

    def history(self, history: list[dict[str, str]], size: int) -> list[dict[str, str]]:
        """6.2 sends its history as it came; both rule sets clean it like the product's snippets."""
        return clean_history(history, size, self.accents)
