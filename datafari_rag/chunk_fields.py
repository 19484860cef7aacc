"""The chunk documents' field names, from ``chunk_fields.json`` beside this module (package data,
and copied into the Solr plugin's jar when it is built): the one list that FileShare's
chunk-and-embed processor (Java, which writes the chunks) and the sidecar (which reads, repairs and
deletes them) both read, so neither keeps its own copy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SPEC_FILE = Path(__file__).resolve().parent / "chunk_fields.json"
_SPEC: dict[str, Any] = json.loads(SPEC_FILE.read_text(encoding="utf-8"))

PARENT: str = _SPEC["parent"]  # the parent's id
INDEX: str = _SPEC["index"]  # 0-based position in the parent
COUNT: str = _SPEC["count"]  # how many chunks the parent's version has
PARENT_VERSION: str = _SPEC["parentVersion"]  # the parent's _version_ the chunks were cut from
TEXT: str = _SPEC["text"]  # the chunk's text, as embedded
FULL_TEXT: str = _SPEC["fullText"]  # a parent's whole text (a chunk's own text too)
HAS_VECTOR: str = _SPEC["hasVector"]
GIVEN_CHUNKS: str = _SPEC["givenChunks"]  # chunks a writer cut itself, embedded as they are
FRENCH_TEXT: str = _SPEC["frenchText"]
FRENCH_TITLE: str = _SPEC["frenchTitle"]
NOT_COPIED: frozenset[str] = frozenset(_SPEC["notCopied"])  # parent fields a chunk does not copy
NOT_COPIED_PREFIXES: tuple[str, ...] = tuple(_SPEC["notCopiedPrefixes"])
