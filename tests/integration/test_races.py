"""Concurrent writers, a writer killed midway, and a delete racing an add: VectorMain ends up
holding exactly the chunks of each parent's current version (bounded, local runs; mismatches
are counted, and must be 0)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from datafari_rag.config import Settings
from datafari_rag.indexing.chunker import chunk_text
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.maintenance import reconcile
from datafari_rag.indexing.outbox import Outbox
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.servers import settings_env

SENTENCE = "Sentence {n} of version {v} describes step {n} of the {v} cooling procedure in detail."


def text(version: str, sentences: int) -> str:
    return " ".join(SENTENCE.format(n=n, v=version) for n in range(sentences))


@pytest.fixture
def race(solr: SolrClient, settings: Settings, tmp_path: Path) -> Settings:
    """The race collections, FileShare's processor off: the sidecar's writer is under test."""
    mine = settings.replace(
        collection_main="race_FileShare",
        collection_vector="race_VectorMain",
        vector_chunk_size=30,
        vector_embedding_mode="solr",
    )
    bootstrap(solr, mine)
    Indexer.of(solr, mine, Outbox(tmp_path / "clean.sqlite")).delete_query("*:*", commit=True)
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
        expected = chunk_text(parent["exactContent"], settings)
        marker = "alpha" if "alpha" in parent["exactContent"] else "bravo"
        if len(chunks) != len(expected):
            wrong.append(f"{pid}: {len(chunks)} chunks, {len(expected)} expected")
        elif any(c.get("parent_version") != parent["_version_"] for c in chunks):
            wrong.append(f"{pid}: chunks of another version")
        elif any(marker not in c["embedded_content"] or c["chunk_count"] != len(expected) for c in chunks):
            wrong.append(f"{pid}: chunk text of the other writer")
    return wrong


@pytest.mark.parametrize("mode", ["sidecar", "solr", "processor"])
def test_two_writers_of_the_same_parents_leave_the_last_version_whole(
    race: Settings, solr: SolrClient, tmp_path: Path, mode: str
) -> None:
    settings = race.replace(vector_embedding_mode=mode)
    if mode == "processor":  # FileShare's processor on: the two writers are two requests to Solr
        bootstrap(solr, settings)
    workers = [Indexer.of(solr, settings, Outbox(tmp_path / "outbox.sqlite")) for _ in range(2)]
    ids = [f"race-{mode}-{i}" for i in range(12)]
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
    assert Outbox(tmp_path / "outbox.sqlite").pending(settings.collection_main) == []


def test_requests_writing_the_same_parents_in_opposite_orders_take_turns(
    race: Settings, solr: SolrClient, tmp_path: Path
) -> None:
    """Straight to FileShare, its processor on: each request holds the parents it wrote until
    their chunks are written; two requests naming the same parents in opposite orders and with
    a delete among them neither wait for each other forever nor leave another version's chunks."""
    settings = race.replace(vector_embedding_mode="processor")
    bootstrap(solr, settings)
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


KILLED_WRITER = """
from datafari_rag.config import load_settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.outbox import Outbox
from datafari_rag.services import solr_client
import sys
settings = load_settings()
indexer = Indexer.of(solr_client(settings), settings, Outbox(__import__("pathlib").Path(sys.argv[1])))
indexer.add([{"id": "killed-1", "title": "Killed", "exactContent": sys.argv[2]}])
"""


def test_a_writer_killed_midway_leaves_a_trace_that_reconcile_completes(
    race: Settings, solr: SolrClient, tmp_path: Path
) -> None:
    settings = race.replace(vector_embedding_mode="sidecar", vector_embedding_batch=2)
    outbox_file = tmp_path / "outbox.sqlite"
    long_text = text("alpha", 400)
    env = {**settings_env(settings), "DATAFARI_RAG_VAR": str(tmp_path / "var")}
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(outbox_file), long_text], env=env, start_new_session=True
    )
    vectors = Indexer.of(solr, settings, Outbox(tmp_path / "other.sqlite")).vectors
    deadline = time.monotonic() + 60
    while not vectors.get(["killed-1_4"], "id") and time.monotonic() < deadline:  # real-time get: uncommitted too
        time.sleep(0.05)
    os.killpg(writer.pid, signal.SIGKILL)  # no cleanup of any kind
    writer.wait()
    assert [pid for pid, _, _ in Outbox(outbox_file).pending(settings.collection_main)] == ["killed-1"]
    assert mismatches(solr, settings, ["killed-1"]) != []  # cut short: some chunks only
    indexer = Indexer.of(solr, settings, Outbox(outbox_file))
    report = reconcile(indexer)
    assert report.errors == []
    assert (
        mismatches(solr, settings, ["killed-1"]) == [] and Outbox(outbox_file).pending(settings.collection_main) == []
    )


def test_a_delete_by_query_right_after_an_uncommitted_add_deletes_it_and_its_chunks(
    race: Settings, solr: SolrClient, tmp_path: Path
) -> None:
    indexer = Indexer.of(solr, race.replace(vector_embedding_mode="sidecar"), Outbox(tmp_path / "o.sqlite"))
    for round_ in range(5):
        ids = [f"dbq-{round_}-{i}" for i in range(4)]
        indexer.add([{"id": i, "source": f"batch{round_}", "exactContent": text("alpha", 3)} for i in ids])
        assert indexer.delete_query(f"source:batch{round_}") == 4  # nothing committed yet
        assert mismatches(solr, race, ids) == []
