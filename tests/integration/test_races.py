"""Concurrent writers and a delete racing an add: VectorMain ends up holding exactly the chunks of
each parent's current version (bounded, local runs; mismatches are counted, and must be 0). A
client killed midway is ``test_solr_processor.py``'s: the processor completes or refuses whole."""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import urllib3
from flask import Flask, Response, request

from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.solr import SolrClient, SolrError, user_properties
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.servers import serve

SENTENCE = "Sentence {n} of version {v} describes step {n} of the {v} cooling procedure in detail."


def text(version: str, sentences: int) -> str:
    return " ".join(SENTENCE.format(n=n, v=version) for n in range(sentences))


@pytest.fixture
def race(solr: SolrClient, settings: Settings, tmp_path: Path) -> Settings:
    """The race collections, cut in chunks of 30 tokens by FileShare's processor."""
    mine = settings.replace(collection_main="race_FileShare", collection_vector="race_VectorMain", vector_chunk_size=30)
    bootstrap(solr, mine)
    user_properties.set_properties(solr, mine.collection_main, {"vector.chunksize": "30"})
    Indexer.of(solr, mine).delete_query("*:*", commit=True)
    return mine


def mismatches(solr: SolrClient, settings: Settings, ids: list[str]) -> list[str]:
    """Each parent whose chunks are not exactly those of its current version, with the reason."""
    for name in (settings.collection_main, settings.collection_vector):
        solr.post(f"{name}/update", json={"commit": {}})
    wrong = []
    for pid in ids:
        found = solr.get(
            f"{settings.collection_main}/select",
            {"q": "*:*", "fq": "{!term f=id v=$p}", "p": pid, "fl": "id,_version_,exactContent"},
        )["response"]["docs"]
        chunks = solr.get(
            f"{settings.collection_vector}/select",
            {"q": "*:*", "fq": "{!term f=parent_doc v=$p}", "p": pid, "rows": 1000, "fl": "*"},
        )["response"]["docs"]
        if not found:
            if chunks:
                wrong.append(f"{pid}: {len(chunks)} chunks of a deleted parent")
            continue
        parent = found[0]
        marker = "alpha" if "alpha" in parent["exactContent"] else "bravo"
        if not chunks or sorted(c["chunk_index"] for c in chunks) != list(range(chunks[0]["chunk_count"])):
            wrong.append(f"{pid}: {len(chunks)} chunks, not the set their chunk_count says")
        elif any(c.get("parent_version") != parent["_version_"] for c in chunks):
            wrong.append(f"{pid}: chunks of another version")
        elif any(marker not in c["embedded_content"] or c["chunk_count"] != len(chunks) for c in chunks):
            wrong.append(f"{pid}: chunk text of the other writer")
    return wrong


def test_two_writers_of_the_same_parents_leave_the_last_version_whole(race: Settings, solr: SolrClient) -> None:
    """Two sidecar writers: two requests to Solr, whose processor takes the parents in turns."""
    settings = race
    workers = [Indexer.of(solr, settings) for _ in range(2)]
    ids = [f"race-{i}" for i in range(12)]
    rng = random.Random(7)

    def write(worker: Indexer, pid: str, version: str, sentences: int, start: threading.Barrier) -> Any:
        start.wait()
        time.sleep(rng.random() * 0.05)  # either may reach Solr first
        return worker.add([{"id": pid, "title": pid, "exactContent": text(version, sentences)}])

    results = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for pid in ids:  # the two versions of each parent are written at the same moment
            start = threading.Barrier(2)
            futures = [pool.submit(write, workers[0], pid, "alpha", 9, start)]
            futures.append(pool.submit(write, workers[1], pid, "bravo", 3, start))
            results += [f.result() for f in futures]
    assert all(r[0].status == "ok" for r in results)
    assert mismatches(solr, settings, ids) == []


def test_requests_writing_the_same_parents_in_opposite_orders_take_turns(
    race: Settings, solr: SolrClient, tmp_path: Path
) -> None:
    """Straight to FileShare, its processor on: each request holds the parents it wrote until
    their chunks are written; two requests naming the same parents in opposite orders and with
    a delete among them neither wait for each other forever nor leave another version's chunks."""
    settings = race
    ids = [f"turns-{i}" for i in range(8)]
    fast = SolrClient(solr.base_url, timeout=60, auth=solr.auth)  # a wait for a lock would end in a 503 after 120 s

    def post(version: str, order: list[str], start: threading.Barrier) -> dict[str, Any]:
        body: list[Any] | dict[str, Any] = [{"id": i, "title": i, "exactContent": text(version, 4)} for i in order]
        start.wait()
        fast.post(f"{settings.collection_main}/update", json=body)
        return fast.post(f"{settings.collection_main}/update", json={"delete": {"id": order[0]}})

    with ThreadPoolExecutor(max_workers=2) as pool:
        for round_ in range(6):
            start = threading.Barrier(2)
            futures = [
                pool.submit(post, "alpha", ids, start),
                pool.submit(post, "bravo", ids[::-1], start),
            ]
            for future in futures:
                assert future.result()["responseHeader"]["status"] == 0, round_
    assert mismatches(solr, settings, ids) == []  # a parent deleted last has no chunk left either
    fast.post(f"{settings.collection_main}/update", json={"delete": {"query": "id:turns-*"}})
    assert mismatches(solr, settings, ids) == []
    assert solr.get(f"{settings.collection_vector}/select", {"q": "parent_doc:turns-*"})["response"]["numFound"] == 0


def test_a_delete_by_query_right_after_an_uncommitted_add_deletes_it_and_its_chunks(
    race: Settings, solr: SolrClient, tmp_path: Path
) -> None:
    indexer = Indexer.of(solr, race)
    for round_ in range(5):
        ids = [f"dbq-{round_}-{i}" for i in range(4)]
        indexer.add([{"id": i, "source": f"batch{round_}", "exactContent": text("alpha", 3)} for i in ids])
        assert indexer.delete_query(f"source:batch{round_}") == 4  # nothing committed yet
        assert mismatches(solr, race, ids) == []


def test_a_resend_never_waits_on_its_own_earlier_attempt(solr: SolrClient, settings: Settings, agent_url: str) -> None:
    """A client gives up on a write whose embedding is slow (2 s against 12 s) and sends the same
    document again at once, as the indexer does: the resend is answered in its own time, not after
    the first attempt's embedding (it waited behind it, two minutes at a node loss); the first
    attempt, overtaken, writes no chunks, and the parent holds the resend's chunks only."""
    real = urllib3.PoolManager()
    first, released = [True], threading.Event()
    json_body = {"Content-Type": "application/json"}
    proxy = Flask("slow-first-embedding")

    @proxy.post("/v1/embeddings")
    def embeddings() -> Response:
        body = request.get_data()
        if b"first attempt" in body and first[0]:
            first[0] = False
            time.sleep(12)  # the first attempt's embedding, slow
            released.set()
        answer = real.request("POST", f"{agent_url}/embeddings", body=body, headers=json_body)
        return Response(answer.data, answer.status, content_type="application/json")

    with serve(proxy) as front:
        mine = settings.replace(
            collection_main="resend_FileShare",
            collection_vector="resend_VectorMain",
            embeddings_endpoint=f"{front}/v1",
        )
        bootstrap(solr, mine)
        doc = {"id": "resend-1", "title": "Pump", "exactContent": "The first attempt of the pump note. " * 5}
        impatient = SolrClient(solr.base_url, timeout=2, auth=solr.auth)
        with pytest.raises(SolrError) as gave_up:
            impatient.post(f"{mine.collection_main}/update", json=[doc])
        assert gave_up.value.timed_out
        began = time.monotonic()
        solr.post(f"{mine.collection_main}/update", json=[doc])  # the resend, the same document
        took = time.monotonic() - began
        assert released.wait(30)
        time.sleep(1)  # the first attempt writes (or skips) its chunks
    assert took < 6, f"the resend waited {took:.1f} s"
    for name in (mine.collection_main, mine.collection_vector):
        solr.post(f"{name}/update", json={"commit": {}})
    [parent] = solr.get(f"{mine.collection_main}/select", {"q": "id:resend-1", "fl": "_version_"})["response"]["docs"]
    chunks = solr.get(
        f"{mine.collection_vector}/select", {"q": "parent_doc:resend-1", "fl": "parent_version", "rows": 100}
    )["response"]["docs"]
    assert chunks and {c["parent_version"] for c in chunks} == {parent["_version_"]}
