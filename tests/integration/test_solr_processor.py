"""FileShare's chunk-and-embed processor: writes straight into FileShare (any Solr client, never
the sidecar) are reflected in VectorMain on the same commit — add, atomic ACL ``set``, shrink,
delete by id, delete by query — and a write whose chunks cannot be made is refused (503), then
completed by the client sending it again or by ``reconcile``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.maintenance import _changed, _chunks_by_parent, _parent_versions, reconcile
from datafari_rag.solr import SolrClient, SolrError, user_properties
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.servers import free_port, settings_env, wait_for_http

PARAGRAPH = (
    "The lighthouse keeper of the northern beacon writes the evening reading in the log book, "
    "with the wind, the swell and the visibility, then climbs to trim the lamp before dusk. "
)


def long_text(paragraphs: int) -> str:
    return "\n\n".join(f"Entry {i}. " + PARAGRAPH * 3 for i in range(paragraphs))


@pytest.fixture(scope="module")
def inside(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, Indexer]:
    mine = settings.replace(
        collection_main="proc_FileShare",
        collection_vector="proc_VectorMain",
        vector_chunk_size=60,
    )
    report = bootstrap(solr, mine)
    assert report.properties.get("proc_FileShare:vector.enabled", "true") == "true"
    indexer = Indexer.of(solr, mine)
    return mine, indexer


def write(solr: SolrClient, collection: str, body: Any) -> dict[str, Any]:
    """A write that never goes through the sidecar (ManifoldCF, an admin, any Solr client)."""
    return solr.post(f"{collection}/update", json=body, params={"commit": "true"})


def chunks_of(solr: SolrClient, settings: Settings, parent: str) -> list[dict[str, Any]]:
    response = solr.post(
        f"{settings.collection_vector}/internal",
        json={
            "query": "*:*",
            "filter": f'{{!term f=parent_doc v="{parent}"}}',
            "limit": 1000,
            "sort": "chunk_index asc",
            "fields": "*",
        },
    )
    return response["response"]["docs"]


def parent_version(solr: SolrClient, settings: Settings, doc_id: str) -> int:
    return solr.get(f"{settings.collection_main}/get", {"id": doc_id, "fl": "_version_"})["doc"]["_version_"]


def test_add_atomic_update_shrink_and_deletes_reach_vectormain(
    solr: SolrClient, inside: tuple[Settings, Indexer]
) -> None:
    mine, _ = inside
    fs = mine.collection_main
    write(solr, fs, {"delete": {"query": "*:*"}})
    write(
        solr,
        fs,
        [
            {
                "id": "doc-a",
                "title": "Keeper log",
                "source": "logs",
                "language": "fr",
                "allow_token_document": ["alice"],
                "exactContent": long_text(4),
            }
        ],
    )
    chunks = chunks_of(solr, mine, "doc-a")
    assert len(chunks) >= 4
    version = parent_version(solr, mine, "doc-a")
    for i, chunk in enumerate(chunks):
        assert chunk["id"] == f"doc-a_{i}" and chunk["chunk_index"] == i
        assert chunk["chunk_count"] == len(chunks) and chunk["parent_version"] == version
        assert chunk["title"] == ["Keeper log"] and chunk["source"] == "logs"
        assert chunk["allow_token_document"] == ["alice"]
        assert chunk["has_vector"] is True and len(chunk["vector_384"]) == 384
        assert chunk["exactContent"] == chunk["embedded_content"] and len(chunk["exactContent"]) < 1000
    # every chunk is at most 60 tokens of the model's tokenizer (the unit is tokens)
    from datafari_rag.text.tokens import count_tokens

    assert max(count_tokens(c["embedded_content"]) for c in chunks) <= 60

    # an atomic update of the ACL alone: the processor sees the merged document and re-writes the chunks
    write(solr, fs, [{"id": "doc-a", "allow_token_document": {"set": ["hr-only"]}}])
    after = chunks_of(solr, mine, "doc-a")
    assert [c["embedded_content"] for c in after] == [c["embedded_content"] for c in chunks]
    assert all(c["allow_token_document"] == ["hr-only"] for c in after)
    assert {c["parent_version"] for c in after} == {parent_version(solr, mine, "doc-a")} != {version}

    # shrink: the chunks of the longer version go
    write(solr, fs, [{"id": "doc-a", "title": "Keeper log", "exactContent": PARAGRAPH}])
    shrunk = chunks_of(solr, mine, "doc-a")
    assert len(shrunk) == 1 and shrunk[0]["chunk_count"] == 1
    assert shrunk[0]["allow_token_document"] == ["__nosecurity__"]
    # no text left: no chunk left (deleted by id, the previous count being known)
    write(solr, fs, [{"id": "doc-a", "title": "Keeper log"}])
    assert chunks_of(solr, mine, "doc-a") == []

    # delete by id
    write(solr, fs, {"delete": {"id": "doc-a"}})
    assert chunks_of(solr, mine, "doc-a") == []

    # delete by query: the matching parents are found first (uncommitted ones too)
    docs = [{"id": f"q-{i}", "source": "old" if i % 2 else "new", "exactContent": long_text(2)} for i in range(6)]
    solr.post(f"{fs}/update", json=docs)  # not committed: delete-by-query must still see them
    write(solr, fs, {"delete": {"query": "source:old"}})
    remaining = {i: len(chunks_of(solr, mine, f"q-{i}")) for i in range(6)}
    assert [i for i, n in remaining.items() if n] == [0, 2, 4], remaining
    assert _changed(_parent_versions(inside[1]), _chunks_by_parent(inside[1])) == []


def test_the_sidecar_indexer_only_forwards_in_processor_mode(
    solr: SolrClient, inside: tuple[Settings, Indexer]
) -> None:
    mine, indexer = inside
    results = indexer.add([{"id": "side-1", "exactContent": long_text(3)}], commit=True)
    assert [r.as_dict() for r in results] == [{"id": "side-1", "status": "ok"}]
    assert len(chunks_of(solr, mine, "side-1")) >= 3
    assert indexer.delete_ids(["side-1"], commit=True) == 1
    assert chunks_of(solr, mine, "side-1") == []


def test_user_properties_change_the_chunking(solr: SolrClient, inside: tuple[Settings, Indexer]) -> None:
    mine, _ = inside
    fs = mine.collection_main
    with pytest.raises(ValueError, match=r"vector\.splitter"):
        user_properties.validated({"vector.splitter": "wordSplitter"})
    with pytest.raises(ValueError, match="unknown"):
        user_properties.validated({"vector.chunk": "3"})
    before = user_properties.get(solr, fs)
    try:
        user_properties.set_properties(
            solr, fs, user_properties.validated({"vector.chunksize": "400", "vector.chunksize.unit": "characters"})
        )
        write(solr, fs, [{"id": "chars", "exactContent": long_text(3)}])
        chunks = chunks_of(solr, mine, "chars")
        assert chunks and max(len(c["embedded_content"]) for c in chunks) <= 400
        assert max(len(c["embedded_content"]) for c in chunks) > 200
    finally:
        user_properties.set_properties(solr, fs, {k: before[k] for k in ("vector.chunksize", "vector.chunksize.unit")})


def missing(solr: SolrClient, settings: Settings, tmp_path: Path) -> list[str]:
    """Parents whose chunks are absent, incomplete, unvectorised or of another version."""
    indexer = Indexer.of(solr, settings)
    chunks = _chunks_by_parent(indexer)
    changed = _changed(_parent_versions(indexer), chunks)
    return changed + sorted(p for p, c in chunks.items() if c.missing_vectors)


def test_a_write_whose_chunks_fail_is_refused_and_completed_later(
    solr: SolrClient, settings: Settings, tmp_path: Path
) -> None:
    """The embedding service down, then VectorMain unreachable: each time Solr answers 503 naming
    the documents, no chunk of an older version survives (an ACL change never leaves chunks with
    the old ACL), and both recoveries leave every parent with its complete, vectorised chunks:
    the client sending the write again, or ``reconcile``."""
    dead = f"http://127.0.0.1:{free_port()}/v1"
    mine = settings.replace(
        collection_main="procfail_FileShare",
        collection_vector="procfail_VectorMain",
    )
    bootstrap(solr, mine)
    fs = mine.collection_main
    write(solr, fs, [{"id": "f-1", "allow_token_document": ["alice"], "exactContent": long_text(2)}])
    assert chunks_of(solr, mine, "f-1")
    update = [
        {"id": "f-1", "allow_token_document": {"set": ["hr-only"]}},
        {"id": "f-2", "exactContent": long_text(2)},
    ]
    bootstrap(solr, mine.replace(embeddings_endpoint=dead))
    with pytest.raises(SolrError) as refused:
        write(solr, fs, update)
    assert refused.value.status == 503
    assert "Could not embed the chunks of documents f-1, f-2" in str(refused.value)
    assert "send them again, or run datafari-rag reconcile" in str(refused.value)
    assert chunks_of(solr, mine, "f-1") == chunks_of(solr, mine, "f-2") == []  # the old ACL's chunks went
    assert missing(solr, mine, tmp_path) == ["f-1", "f-2"]
    bootstrap(solr, mine)
    write(solr, fs, update)  # recovery 1: the client sends the write again
    assert missing(solr, mine, tmp_path) == []
    assert {c["allow_token_document"][0] for c in chunks_of(solr, mine, "f-1")} == {"hr-only"}

    # VectorMain unreachable (here: the processor aimed at a collection that does not exist)
    user_properties.set_properties(solr, fs, {"vector.collection": "procfail_Missing"})
    try:
        with pytest.raises(SolrError) as refused:
            write(solr, fs, [{"id": "f-3", "exactContent": long_text(2)}])
        assert refused.value.status == 503 and "Could not write the chunks of document f-3" in str(refused.value)
    finally:
        user_properties.set_properties(solr, fs, {"vector.collection": mine.collection_vector})
    assert missing(solr, mine, tmp_path) == ["f-3"]
    report = reconcile(Indexer.of(solr, mine))  # recovery 2
    assert report.fixed == {"parents without chunks": 1} and report.errors == []
    assert missing(solr, mine, tmp_path) == []


def start_agent(port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The local embedding agent as production runs it (gunicorn), in a process group of its own."""
    agent = subprocess.Popen(
        [sys.executable, "-m", "datafari_rag.cli", "agent", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_for_http(f"http://127.0.0.1:{port}/health", timeout=120)
    return agent


def kill(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGKILL)  # no cleanup of any kind
    process.wait()


def test_the_embedding_agent_killed_mid_run_loses_nothing(solr: SolrClient, settings: Settings, tmp_path: Path) -> None:
    """A client writes batches straight into FileShare while the embedding agent is killed and
    restarted, twice. The first time the client sends the refused batches again (as ManifoldCF
    retries failed documents); the second time it does not, and ``reconcile`` completes them.
    Then: 0 parents without their complete, vectorised chunks."""
    port = free_port()
    mine = settings.replace(
        collection_main="procagent_FileShare",
        collection_vector="procagent_VectorMain",
        vector_chunk_size=60,
        embeddings_endpoint=f"http://127.0.0.1:{port}/v1",
    )
    env = {**settings_env(mine), "DATAFARI_RAG_VAR": str(tmp_path / "var")}
    fs = mine.collection_main
    batches = [
        [{"id": f"k-{b}-{i}", "title": f"Log {b}", "exactContent": long_text(1 + (b + i) % 3)} for i in range(4)]
        for b in range(24)
    ]
    agent = start_agent(port, env)
    try:
        bootstrap(solr, mine)
        for phase, part in enumerate((batches[:12], batches[12:])):
            refused: list[list[dict[str, Any]]] = []
            written = threading.Event()

            def send(
                part: list[list[dict[str, Any]]] = part,
                refused: list[Any] = refused,
                written: threading.Event = written,
            ) -> None:
                for n, batch in enumerate(part):
                    try:
                        solr.post(f"{fs}/update", json=batch)
                    except SolrError as exc:
                        assert exc.status == 503 and "Could not embed the chunks of" in str(exc), exc
                        refused.append(batch)
                    if n == 3:
                        written.set()

            writer = threading.Thread(target=send)
            writer.start()
            assert written.wait(120)
            kill(agent)
            writer.join(timeout=20)  # down long enough for Solr's own retries to give up
            agent = start_agent(port, env)
            writer.join(300)
            assert refused, "the agent was killed while batches were still being written"
            assert len(refused) < len(part), "some batches were written, some refused"
            if phase == 0:
                for batch in refused:  # recovery 1: the client sends the refused batches again
                    solr.post(f"{fs}/update", json=batch)
            solr.post(f"{fs}/update", json={"commit": {}})
            if phase == 0:
                assert missing(solr, mine, tmp_path) == []
            else:
                assert len(missing(solr, mine, tmp_path)) >= 4
                report = reconcile(Indexer.of(solr, mine))  # recovery 2
                assert report.errors == [] and report.fixed["parents without chunks"] >= 4
                assert missing(solr, mine, tmp_path) == []
        parents = solr.get(f"{fs}/internal", {"q": "*:*", "rows": 0})["response"]["numFound"]
        assert parents == 96
    finally:
        kill(agent)
