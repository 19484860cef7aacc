"""A parent tightened or deleted straight in FileShare (not through the sidecar) is not readable
through its old chunks: the query-time parent check drops them on every path that returns chunks,
and sync rewrites them however the parent was changed (an atomic update included).

Stale chunks arise when FileShare's processor is switched off (``vector config
vector.enabled=false``) while clients write; with it on the chunks follow each write in the same
request (``test_solr_processor.py``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.maintenance import reconcile, sync
from datafari_rag.solr import SolrClient, user_properties
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.fake_llm import FakeLlm

API = "/Datafari/rest/v2.0"
TOPIC = "The lighthouse keeper logs the {what} of the northern beacon every evening at dusk."
MARKER = "zebrafinch"


@pytest.fixture
def stale(solr: SolrClient, settings: Settings) -> Iterator[tuple[Settings, Indexer]]:
    """Collections of this test's own, six public documents on one topic, the first with a marker;
    then FileShare's processor switched off, so that a write straight to FileShare leaves the
    chunks stale (on again afterwards)."""
    mine = settings.replace(collection_main="stale_FileShare", collection_vector="stale_VectorMain")
    bootstrap(solr, mine)
    indexer = Indexer.of(solr, mine)
    indexer.delete_query("*:*", commit=True)
    docs = [
        {"id": f"stale-{i}", "title": f"Log {i}", "exactContent": TOPIC.format(what=f"reading {i}")} for i in range(6)
    ]
    docs[0]["exactContent"] = TOPIC.format(what=f"{MARKER} reading")
    assert all(r.status == "ok" for r in indexer.add(docs, commit=True))
    processor(solr, mine, on=False)
    try:
        yield mine, indexer
    finally:
        processor(solr, mine, on=True)


def processor(solr: SolrClient, settings: Settings, on: bool) -> None:
    user_properties.set_properties(solr, settings.collection_main, {"vector.enabled": "true" if on else "false"})


def straight_to_fileshare(solr: SolrClient, settings: Settings, body: Any) -> None:
    """A write that never goes through the sidecar (ManifoldCF, an admin, any Solr client)."""
    solr.post(f"{settings.collection_main}/update", json=body, params={"commit": "true"})


def tighten(solr: SolrClient, settings: Settings, doc_id: str) -> None:
    """An atomic update: only the ACL changes, indexed_at and the text stay."""
    straight_to_fileshare(solr, settings, [{"id": doc_id, "allow_token_document": {"set": ["hr-only"]}}])


def vector_ids(client: FlaskClient, top_k: int = 6) -> list[str]:
    response = client.get(f"{API}/search/vector", query_string={"queryrag": "lighthouse beacon log", "topK": top_k})
    assert response.status_code == 200, response.get_data()
    return [d["parent_doc"] for d in response.get_json()["response"]["docs"]]


def answer(client: FlaskClient, llm: FakeLlm, stream: bool = False) -> str:
    """Everything the user and the LLM saw for a question about the topic."""
    path = f"{API}/ai/stream" if stream else f"{API}/ai/rag"
    response = client.post(path, json={"query": "What does the lighthouse keeper log?"})
    return response.get_data(as_text=True) + json.dumps(llm.prompts())


@pytest.mark.parametrize("change", ["tighten", "delete"])
def test_old_chunks_of_a_parent_changed_straight_in_fileshare_are_never_used(
    stale: tuple[Settings, Indexer],
    solr: SolrClient,
    fake_llm_server: tuple[FakeLlm, str],
    fake_llm: FakeLlm,
    change: str,
) -> None:
    settings, _ = stale
    client_of: Callable[[str], FlaskClient] = lambda method: create_app(  # noqa: E731
        settings.replace(llm_endpoint=fake_llm_server[1], retrieval_method=method)
    ).test_client()
    assert "stale-0" in vector_ids(client_of("vector"))
    assert MARKER in answer(client_of("vector"), fake_llm)
    if change == "tighten":
        tighten(solr, settings, "stale-0")
    else:
        straight_to_fileshare(solr, settings, {"delete": {"id": "stale-0"}})
    # the chunks still carry the old, public ACL: only the parent check keeps them out
    chunks = solr.get(f"{settings.collection_vector}/select", {"q": "parent_doc:stale-0", "fl": "allow_token_document"})
    assert chunks["response"]["docs"] and chunks["response"]["docs"][0]["allow_token_document"] == ["__nosecurity__"]
    ids = vector_ids(client_of("vector"), top_k=4)
    assert "stale-0" not in ids and len(ids) == 4  # the next chunks were taken: top K still holds
    for method in ("vector", "rrf"):
        for stream in (False, True):
            fake_llm.reset()
            seen = answer(client_of(method), fake_llm, stream)
            assert MARKER not in seen and "stale-0" not in seen, (method, stream)


def test_sync_and_reconcile_see_an_atomic_acl_change(stale: tuple[Settings, Indexer], solr: SolrClient) -> None:
    """Changed while the processor was off; once it is on again, sync and reconcile write the
    parents again and the processor rewrites their chunks."""
    settings, indexer = stale
    assert sync(indexer).found["new or changed parents"] == 0
    tighten(solr, settings, "stale-1")
    processor(solr, settings, on=True)
    report = sync(indexer)
    assert report.found["new or changed parents"] == 1 and report.fixed["new or changed parents"] == 1
    chunks = solr.get(f"{settings.collection_vector}/select", {"q": "parent_doc:stale-1", "fl": "allow_token_document"})
    assert all(c["allow_token_document"] == ["hr-only"] for c in chunks["response"]["docs"])
    processor(solr, settings, on=False)
    tighten(solr, settings, "stale-2")
    straight_to_fileshare(solr, settings, [{"id": "stale-3", "exactContent": "Rewritten: the fog horn schedule."}])
    processor(solr, settings, on=True)
    report = reconcile(indexer)
    assert (
        report.found["stale or incomplete chunks (parents)"] == 2
        and report.fixed["stale or incomplete chunks (parents)"] == 2
    )
    rewritten = solr.get(f"{settings.collection_vector}/select", {"q": "parent_doc:stale-3", "fl": "embedded_content"})
    assert [c["embedded_content"] for c in rewritten["response"]["docs"]] == ["Rewritten: the fog horn schedule."]
    assert reconcile(indexer).found["stale or incomplete chunks (parents)"] == 0
