"""Datafari 6.2's in-memory vector search on the real Solr and the real model: 6.2's own key turns
it on, the best BM25 documents are chunked and embedded at query time, and the chunk closest to
the question comes first — read only from what the user may read (every mode's leak test in
test_acl_security.py covers it too)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from datafari_rag.config import Settings, load_settings
from datafari_rag.indexing.embedder import ChunkEmbedder
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.retrieval import RetrievalContext, retrieve
from datafari_rag.security import UserAccess
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import BootstrapReport

PARAGRAPHS = [
    "The canteen serves lunch from noon to two in the afternoon.",
    "Fire drills take place twice a year; everyone leaves by the nearest stairs.",
    "The boiler room is inspected every Monday morning by the maintenance crew.",
]


def test_6_2s_key_turns_it_on_and_the_closest_chunk_comes_first(
    solr: SolrClient, settings: Settings, bootstrapped: BootstrapReport, tmp_path: Path
) -> None:
    text = "\n\n".join(p * 3 for p in PARAGRAPHS)  # three paragraphs, each its own chunk
    doc = {"id": "mem-1", "title": "Site rules", "url": "file://mem/1", "exactContent": text}
    assert Indexer.of(solr, settings).add([doc], commit=True)[0].status == "ok"
    path = tmp_path / "rag.properties"
    path.write_text("rag.enable.vector.search=true\ninMemory.maxChunks=2\n")
    assert load_settings(path, env={}).retrieval == "memory"
    mine = settings.replace(retrieval_method="memory", in_memory_max_chunks=2, chunk_size=200, max_files=5)
    ctx = replace(RetrievalContext.of(solr, mine, UserAccess.anonymous()), embed=ChunkEmbedder(mine).embed)
    found = retrieve(ctx, "When is the boiler checked by the maintenance team?")
    assert len(found) == 2 and found[0].id == "mem-1" and "boiler room" in found[0].content
    assert found[0].score > found[1].score and found[0].chunk is not None
