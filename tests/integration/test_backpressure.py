"""A slow embedding service under bulk indexing: 300 documents written straight through FileShare's
processor reach the index whole — none failed, every parent with its chunks — and the agent
computes nothing its caller has given up on (back-pressure: batches refused fast and sent again,
instead of abandoned calls piling up on the service)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np

from datafari_rag.agent.admission import Admission
from datafari_rag.agent.app import create_agent_app
from datafari_rag.agent.model import MODEL_NAME, SentenceEmbedder
from datafari_rag.config import Settings
from datafari_rag.indexing.corpus import index_documents
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.servers import serve

DOCS = 300
PER_TEXT = 0.04  # seconds: a service embedding 25 texts a second, however many calls share it
TIMEOUT = 5  # seconds Solr's model waits for one call


class SlowEmbedder:
    """The real model behind a service of fixed capacity: concurrent calls share it text by text,
    so that two 64-text calls side by side both take longer than Solr's timeout."""

    def __init__(self, real: SentenceEmbedder) -> None:
        self.real, self.lock, self.computed = real, threading.Lock(), 0

    def embed(self, texts: list[str]) -> np.ndarray:
        for _ in texts:
            with self.lock:
                time.sleep(PER_TEXT)
        self.computed += len(texts)
        return self.real.embed(texts)

    def count_tokens(self, text: str) -> int:
        return self.real.count_tokens(text)


def test_300_documents_through_a_slow_embedding_service_are_all_whole_and_nothing_is_computed_in_vain(
    solr: SolrClient, settings: Settings, embedder: SentenceEmbedder, tmp_path: Path
) -> None:
    slow = SlowEmbedder(embedder)
    admission = Admission(max_pending=1024, deadline=TIMEOUT - 1)
    with serve(create_agent_app(slow, "extractive", admission)) as agent:  # type: ignore[arg-type]
        mine = settings.replace(
            collection_main="slow_FileShare",
            collection_vector="slow_VectorMain",
            embeddings_endpoint=f"{agent}/v1",
            embeddings_model_name=MODEL_NAME,
            embeddings_timeout=TIMEOUT,
            index_retry_attempts=6,
        )
        bootstrap(solr, mine)  # which embeds one text: the model's dimension, checked against the field
        before = slow.computed
        indexer = Indexer.of(solr, mine)
        docs = [
            {
                "id": f"slow-{i}",
                "title": f"Note {i}",
                "exactContent": f"Maintenance note {i}: the pump {i} was checked.",
            }
            for i in range(DOCS)
        ]
        report = index_documents(indexer, docs, progress=False)
    assert report.added == DOCS and report.failed == 0, report
    solr.get(f"{mine.collection_vector}/update", {"commit": "true"})
    found = solr.get(
        f"{mine.collection_vector}/select",
        {"q": "*:*", "rows": 0, "facet": "true", "facet.field": "parent_doc", "facet.limit": -1, "facet.mincount": 1},
    )
    parents = found["facet_counts"]["facet_fields"]["parent_doc"][::2]
    assert len(parents) == DOCS  # every parent has its chunk
    # the first batch is admitted before the agent knows its pace; after it, nothing computed is lost
    assert slow.computed - before <= DOCS + 64, (slow.computed, before, admission.refused)
    assert admission.refused > 0  # it did push back


def test_an_embedding_service_slower_than_the_timeout_fails_the_write_naming_the_settings(
    solr: SolrClient, settings: Settings, embedder: SentenceEmbedder
) -> None:
    """Solr's model gives up after solr.embeddings.timeout, solr.embeddings.maxRetries times more:
    the write fails (503, no chunk written: the resend or ``reconcile`` completes it, docs/indexing.md)
    and its error says which settings to raise, with their values; a one-document batch is not
    sent alone again to find the culprit."""
    from flask import Flask, jsonify, request

    hang = threading.Event()
    calls: list[int] = []
    app = Flask("hanging")

    @app.post("/v1/embeddings")
    def embeddings():  # type: ignore[no-untyped-def]
        texts = request.get_json()["input"]
        calls.append(len(texts))
        if hang.is_set():
            time.sleep(4)
        vectors = embedder.embed(texts)
        return jsonify({"data": [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)], "model": "m"})

    with serve(app) as service:
        mine = settings.replace(
            collection_main="hang_FileShare",
            collection_vector="hang_VectorMain",
            embeddings_endpoint=f"{service}/v1",
            embeddings_model_name=MODEL_NAME,
            embeddings_timeout=1,
            embeddings_max_retries=1,
            index_retry_attempts=0,
        )
        bootstrap(solr, mine)
        [entry] = [m for m in solr.get("hang_VectorMain/schema/text-to-vector-model-store")["models"]]
        assert entry["params"]["timeout"] == 1 and entry["params"]["maxRetries"] == 1
        hang.set()
        before = len(calls)
        doc = {"id": "hang-1", "title": "Pump", "exactContent": "The pump was checked on site."}
        report = index_documents(Indexer.of(solr, mine), [doc], progress=False)
    assert report.added == 0 and report.failed == 1, report
    error = report.errors[0]
    assert "Could not embed the chunks of document hang-1" in error, error
    assert "solr.embeddings.timeout (1 s), 2 time(s) (solr.embeddings.maxRetries = 1)" in error, error
    assert len(calls) - before == 2  # the first call and its one retry
    solr.get("hang_VectorMain/update", {"commit": "true"})
    assert solr.get("hang_VectorMain/select", {"q": "parent_doc:hang-1", "rows": 0})["response"]["numFound"] == 0
