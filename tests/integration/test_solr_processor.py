"""FileShare's chunk-and-embed processor: writes straight into FileShare (any Solr client, never
the sidecar) are reflected in VectorMain on the same commit — add, atomic ACL ``set``, shrink,
delete by id, delete by query — and a write whose chunks cannot be made fails whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.maintenance import _changed, _chunks_by_parent, _parent_versions, reconcile
from datafari_rag.indexing.outbox import Outbox
from datafari_rag.solr import SolrClient, SolrError, user_properties
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.servers import free_port

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
        vector_embedding_mode="processor",
        vector_chunk_size=60,
    )
    report = bootstrap(solr, mine)
    assert report.properties.get("proc_FileShare:vector.enabled", "true") == "true"
    indexer = Indexer.of(solr, mine, Outbox(tmp_path_factory.mktemp("proc") / "o.sqlite"))
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
        assert chunk["title"] == "Keeper log" and chunk["source"] == "logs"
        assert chunk["allow_token_document"] == ["alice"]
        assert chunk["has_vector"] is True and len(chunk["vector_384"]) == 384
        assert chunk["exactContent"] == chunk["embedded_content"] and len(chunk["exactContent"]) < 1000
    # every chunk is at most 60 tokens of the model's tokenizer (the unit is tokens)
    from datafari_rag.indexing.chunker import count_tokens

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


def test_a_write_whose_chunks_fail_fails_whole(solr: SolrClient, settings: Settings, tmp_path: Path) -> None:
    """The embedding service down, then VectorMain unreachable: each time Solr refuses the write
    (503) and FileShare keeps nothing of it; once they are back, the same write goes through and
    every parent has its complete, vectorised chunks."""
    dead = f"http://127.0.0.1:{free_port()}/v1"
    mine = settings.replace(
        collection_main="procfail_FileShare",
        collection_vector="procfail_VectorMain",
        vector_embedding_mode="processor",
        embeddings_endpoint=dead,
    )
    bootstrap(solr, mine)
    doc = [{"id": "f-1", "exactContent": long_text(2)}]
    with pytest.raises(SolrError) as refused:
        write(solr, mine.collection_main, doc)
    assert refused.value.status == 503
    assert "Could not embed the chunks of document f-1" in str(refused.value)
    assert solr.get(f"{mine.collection_main}/get", {"id": "f-1"})["doc"] is None
    bootstrap(solr, mine.replace(embeddings_endpoint=settings.embeddings_endpoint))
    # VectorMain unreachable (here: the processor aimed at a collection that does not exist)
    user_properties.set_properties(solr, mine.collection_main, {"vector.collection": "procfail_Missing"})
    with pytest.raises(SolrError) as refused:
        write(solr, mine.collection_main, doc)
    assert refused.value.status == 503 and "Could not write the chunks of document f-1" in str(refused.value)
    assert solr.get(f"{mine.collection_main}/get", {"id": "f-1"})["doc"] is None
    user_properties.set_properties(solr, mine.collection_main, {"vector.collection": mine.collection_vector})
    write(solr, mine.collection_main, doc)
    indexer = Indexer.of(solr, mine, Outbox(tmp_path / "o.sqlite"))
    assert _changed(_parent_versions(indexer), _chunks_by_parent(indexer)) == []
    assert reconcile(indexer).fixed == {}
