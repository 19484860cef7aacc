"""Loads the sample corpus that ships with the project (English and French short documents), and
the demo's restricted documents (HR managers, staff, the finance team: the demo users' tokens in
``conf/acl-mapping.json``).

Used by ``make run`` so that a fresh install has something to search and ask about; it goes
through the real chunk-and-embed indexer, like any other document.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..paths import SAMPLE_CORPUS
from .corpus import index_documents
from .indexer import Indexer

PARENT_FIELDS = ("id", "title", "url", "source", "extension", "language", "last_modified", "allow_token_document")
RESTRICTED_CORPUS = SAMPLE_CORPUS.with_name("sample_restricted.jsonl")


def read_corpus(path: Path = SAMPLE_CORPUS) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def index_sample(indexer: Indexer, path: Path = SAMPLE_CORPUS) -> int:
    """Indexes the sample corpus (idempotent: same ids each time); returns the document count."""
    docs = [{**{k: d[k] for k in PARENT_FIELDS if k in d}, "exactContent": d["text"]} for d in read_corpus(path)]
    report = index_documents(indexer, docs, total=len(docs), progress=False)
    if report.failed:
        raise RuntimeError("sample corpus not fully indexed: " + "; ".join(report.errors))
    return len(docs)
