"""Loads the sample corpus that ships with the project (English and French short documents).

Each document goes to FileShare, and, being short, as a single chunk ``<id>_0`` to VectorMain,
where the text-to-vector update chain embeds it. Used by ``make run`` so that a fresh install
has something to search and ask about.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..config import Settings
from ..paths import SAMPLE_CORPUS
from ..solr import SolrClient

PARENT_FIELDS = ("id", "title", "url", "source", "extension", "language", "last_modified")


def read_corpus(path: Path = SAMPLE_CORPUS) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def index_sample(solr: SolrClient, settings: Settings, path: Path = SAMPLE_CORPUS) -> int:
    """Indexes the sample corpus (idempotent: same ids each time); returns the document count."""
    docs = read_corpus(path)
    parents = [{**{k: d[k] for k in PARENT_FIELDS}, "exactContent": d["text"]} for d in docs]
    chunks = [
        {
            **{k: d[k] for k in PARENT_FIELDS if k != "id"},
            "id": f"{d['id']}_0",
            "parent_doc": d["id"],
            "chunk_index": 0,
            "embedded_content": d["text"],
            "exactContent": d["text"],
        }
        for d in docs
    ]
    solr.post(f"{settings.collection_main}/update", json=parents, params={"commit": "true"})
    solr.post(f"{settings.collection_vector}/update", json=chunks, params={"commit": "true"}, timeout=300)
    return len(docs)
