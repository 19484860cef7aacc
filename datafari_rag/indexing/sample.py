"""Loads the sample corpus that ships with the project (English and French short documents).

Used by ``make run`` so that a fresh install has something to search and ask about; it goes
through the real chunk-and-embed processor, like any other document.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..config import Settings
from ..paths import SAMPLE_CORPUS
from ..solr import SolrClient
from .outbox import Outbox
from .processor import ChunkProcessor

PARENT_FIELDS = ("id", "title", "url", "source", "extension", "language", "last_modified")


def read_corpus(path: Path = SAMPLE_CORPUS) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def index_sample(solr: SolrClient, settings: Settings, path: Path = SAMPLE_CORPUS) -> int:
    """Indexes the sample corpus (idempotent: same ids each time); returns the document count."""
    docs = [{**{k: d[k] for k in PARENT_FIELDS}, "exactContent": d["text"]} for d in read_corpus(path)]
    results = ChunkProcessor(solr, settings, Outbox()).add(docs, commit=True)
    failed = [f"{r.id}: {r.error}" for r in results if r.status != "ok" or r.pending]
    if failed:
        raise RuntimeError("sample corpus not fully indexed: " + "; ".join(failed))
    return len(docs)
