"""Cleaning what goes into a prompt: the user's query and the documents' text.

The query loses control characters and the characters that have a meaning in Solr's syntax or
in our prompt markup, and is capped at 500 characters; letters of every language (accents
included) stay. Snippets keep their text but cannot close or open our markup.
"""

from __future__ import annotations

import re
import unicodedata

QUERY_MAX_CHARS = 500
_QUERY_SPECIAL = re.compile(r'[<>{}\[\]\\"`|^~*]')
_MARKUP = str.maketrans({"<": "‹", ">": "›", '"': "'", "`": "'"})


def _without_controls(text: str, keep: str = "") -> str:
    return "".join(ch for ch in text if ch in keep or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn"))


def clean_query(query: str) -> str:
    """The query as it may appear in a prompt."""
    text = unicodedata.normalize("NFC", _without_controls(query, keep=" "))
    text = _QUERY_SPECIAL.sub(" ", text)
    return " ".join(text.split())[:QUERY_MAX_CHARS].strip()


def clean_snippet(text: str) -> str:
    """Document text as it may appear between our markup: no markup, no quotes, no controls."""
    return _without_controls(unicodedata.normalize("NFC", text), keep="\n\t").translate(_MARKUP).strip()
