"""Cleaning what goes into a prompt: the user's query and the documents' text.

The query loses control characters and the characters that have a meaning in Solr's syntax or
in our prompt markup, and is capped at 500 characters; letters of every language (accents
included) stay. Snippets keep their text but cannot close or open our markup.
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


def clean_query(query: str) -> str:
    """The query as it may appear in a prompt."""
    text = unicodedata.normalize("NFC", _without_controls(query))
    text = _QUERY_SPECIAL.sub(" ", text)
    return " ".join(text.split())[:QUERY_MAX_CHARS].strip()


def clean_snippet(text: str) -> str:
    """Document text as it may appear between our markup: no markup, no quotes, no controls."""
    return _without_controls(unicodedata.normalize("NFC", text)).translate(_MARKUP).strip()


def clean_history(history: list[dict[str, str]], size: int) -> list[dict[str, str]]:
    """The last ``size`` messages of a conversation, each cleaned like snippet text and capped."""
    if size <= 0:
        return []
    return [
        {"role": m["role"], "content": clean_snippet(m["content"])[:HISTORY_MESSAGE_MAX_CHARS]} for m in history[-size:]
    ]
