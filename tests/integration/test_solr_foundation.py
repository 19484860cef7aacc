"""The foundation on a real Solr: bootstrap, the text-to-vector chain, kNN, BM25, errors."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from datafari_rag.config import Settings
from datafari_rag.paths import CONFIGSETS
from datafari_rag.solr import SolrClient, SolrError, admin
from datafari_rag.solr.bootstrap import BootstrapReport, SchemaProblem, bootstrap
from datafari_rag.solr.model_store import delete_model, desired_model, get_models, put_model
from datafari_rag.testing.servers import free_port, serve
from datafari_rag.testing.solr_proxy import solr_proxy

DOCS = [
    {
        "id": "doc-cat",
        "title": "Pets at home",
        "text": "The feline dozed all afternoon on the rug in front of the fireplace.",
    },
    {
        "id": "doc-revenue",
        "title": "Quarterly report",
        "text": "Revenue grew twelve percent thanks to subscriptions to the cloud offering.",
    },
    {
        "id": "doc-volcano",
        "title": "Geology",
        "text": "Magma rises through cracks in the crust until pressure causes an eruption.",
    },
]
PARAPHRASE = "kitty sleeping by a hearth"


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _chunk(doc: dict[str, str]) -> dict[str, Any]:
    return {
        "id": f"{doc['id']}_0",
        "parent_doc": doc["id"],
        "chunk_index": 0,
        "title": doc["title"],
        "embedded_content": doc["text"],
        "exactContent": doc["text"],
    }


@pytest.fixture(scope="module")
def indexed(solr: SolrClient, settings: Settings, bootstrapped: BootstrapReport) -> None:
    solr.post(
        f"{settings.collection_main}/update",
        json=[{"id": d["id"], "title": d["title"], "exactContent": d["text"]} for d in DOCS],
        params={"commit": "true"},
    )
    solr.post(f"{settings.collection_vector}/update", json=[_chunk(d) for d in DOCS], params={"commit": "true"})


def test_solr_is_9_10_1_in_cloud_mode(solr: SolrClient) -> None:
    info = admin.system_info(solr)
    assert (info["version"], info["mode"]) == ("9.10.1", "solrcloud")
    host, port = info["zk_host"].rsplit(":", 1)  # its ZooKeeper, where bootstrap --secure writes
    assert host and port.isdigit()


def test_bootstrap_is_idempotent(solr: SolrClient, settings: Settings, bootstrapped: BootstrapReport) -> None:
    again = bootstrap(solr, settings)
    assert again.created == []
    assert sorted(again.reloaded) == sorted([settings.collection_main, settings.collection_vector])
    assert again.model == "unchanged"
    collections = admin.list_collections(solr)
    assert collections.count(settings.collection_main) == collections.count(settings.collection_vector) == 1
    assert get_models(solr, settings.collection_vector) == [desired_model(settings)]


def test_bootstrap_refuses_a_collection_of_an_older_schema(
    solr: SolrClient, settings: Settings, tmp_path: Path
) -> None:
    """FileShare's title became multi-valued (Datafari's): a collection created with the single-valued
    one cannot take the new configset (Lucene keeps a field's doc values kind), so bootstrap says
    what to do, changes nothing, and the old collection still takes writes."""
    old = tmp_path / "conf"
    shutil.copytree(CONFIGSETS / "FileShare" / "conf", old)
    schema = old / "managed-schema.xml"
    single = '<field name="title" type="string" indexed="true" stored="true" multiValued="false"/>'
    schema.write_text(re.sub(r'<field name="title" [^>]*/>', single, schema.read_text()))
    admin.upload_configset(solr, "old_FileShare", old)
    admin.create_collection(solr, "old_FileShare", "old_FileShare", 1, 1)
    solr.post(
        "old_FileShare/update", json=[{"id": "o1", "title": "Old", "exactContent": "x"}], params={"commit": "true"}
    )
    mine = settings.replace(collection_main="old_FileShare", collection_vector="old_VectorMain")
    with pytest.raises(SchemaProblem, match="old_FileShare was created by an older datafari-rag: its 'title'"):
        bootstrap(solr, mine)
    assert "old_VectorMain" not in admin.list_collections(solr)  # nothing created or uploaded
    solr.post(
        "old_FileShare/update", json=[{"id": "o2", "title": "Still", "exactContent": "y"}], params={"commit": "true"}
    )
    assert solr.get("old_FileShare/internal", {"q": "*:*"})["response"]["numFound"] == 2


def test_bootstrap_replaces_a_changed_model(
    solr: SolrClient, settings: Settings, bootstrapped: BootstrapReport
) -> None:
    stale = desired_model(settings)
    stale["params"] = {**stale["params"], "timeout": 5}
    delete_model(solr, settings.collection_vector, stale["name"])
    put_model(solr, settings.collection_vector, stale)
    assert bootstrap(solr, settings).model == "replaced"
    assert get_models(solr, settings.collection_vector) == [desired_model(settings)]


def test_the_update_chain_gives_every_chunk_its_384_dim_vector(
    solr: SolrClient, settings: Settings, indexed: None, chunk_embedder: Any
) -> None:
    found = solr.get(
        f"{settings.collection_vector}/select",
        {"q": "*:*", "fq": "parent_doc:doc-*", "fl": "id,embedded_content,vector_384,has_vector", "rows": 10},
    )["response"]["docs"]
    assert sorted(d["id"] for d in found) == sorted(f"{d['id']}_0" for d in DOCS)
    for doc in found:
        assert doc["has_vector"] is True
        vector = np.array(doc["vector_384"], dtype=np.float32)
        assert vector.shape == (384,)
        expected = chunk_embedder.embed([doc["embedded_content"]])[0]
        assert float(np.dot(vector, expected)) > 0.999


def test_a_paraphrase_with_no_shared_word_finds_its_document(
    solr: SolrClient, settings: Settings, indexed: None
) -> None:
    target = DOCS[0]
    assert not _words(PARAPHRASE) & (_words(target["text"]) | _words(target["title"]))
    hits = solr.get(f"{settings.collection_vector}/vector", {"queryrag": PARAPHRASE, "fl": "id,parent_doc,score"})
    docs = hits["response"]["docs"]
    assert docs[0]["parent_doc"] == target["id"]
    assert docs[0]["score"] > docs[1]["score"]


def test_filters_are_knn_prefilters(solr: SolrClient, settings: Settings, indexed: None) -> None:
    """With topK=1, a post-filter would return nothing; a pre-filter returns the filtered chunk."""
    hits = solr.get(
        f"{settings.collection_vector}/vector",
        {"queryrag": PARAPHRASE, "topK": 1, "fq": "parent_doc:doc-volcano", "fl": "id"},
    )
    assert [d["id"] for d in hits["response"]["docs"]] == ["doc-volcano_0"]


def test_knn_explores_efsearch_candidates_and_keeps_topk(solr: SolrClient, settings: Settings, indexed: None) -> None:
    """``efSearch`` widens the graph search, not the results: topK matches, the best of the wider
    search (here every chunk, so the exact nearest); a count out of range is the client's error."""
    path = f"{settings.collection_vector}/vector"
    every = solr.get(path, {"queryrag": PARAPHRASE, "topK": 1000, "rows": 3, "fl": "id", "fq": "id:doc-*"})
    wide = solr.get(path, {"queryrag": PARAPHRASE, "topK": 3, "efSearch": 1000, "fl": "id", "fq": "id:doc-*"})
    assert wide["response"]["numFound"] == 3
    assert [d["id"] for d in wide["response"]["docs"]] == [d["id"] for d in every["response"]["docs"]]
    for bad in ("0", "many", "20000"):
        with pytest.raises(SolrError) as refused:
            solr.get(path, {"queryrag": PARAPHRASE, "efSearch": bad})
        assert refused.value.status == 400
        assert "efSearch" in str(refused.value)


def test_bm25_search_on_fileshare(solr: SolrClient, settings: Settings, indexed: None) -> None:
    hits = solr.get(
        f"{settings.collection_main}/select",
        {"q": "subscriptions revenue", "q.op": "OR", "fq": "id:doc-*", "fl": "id,score"},
    )["response"]
    assert hits["docs"][0]["id"] == "doc-revenue"
    # English stemming: "erupted" matches "eruption"'s stem "erupt".
    stemmed = solr.get(f"{settings.collection_main}/select", {"q": "erupted", "fq": "id:doc-*", "fl": "id"})[
        "response"
    ]["docs"]
    assert [d["id"] for d in stemmed] == ["doc-volcano"]


@pytest.fixture(scope="module")
def bare_collection(solr: SolrClient, bootstrapped: BootstrapReport) -> str:
    """A VectorMain-like collection whose model store starts empty."""
    name = f"bare_{free_port()}"
    admin.upload_configset(solr, name, CONFIGSETS / "VectorMain" / "conf")
    admin.create_collection(solr, name, name, 1, 1)
    return name


def test_a_missing_model_is_a_clear_error_not_a_hang(solr: SolrClient, bare_collection: str) -> None:
    began = time.monotonic()
    with pytest.raises(SolrError, match="default_model' can't be found in the store") as query_error:
        solr.get(f"{bare_collection}/vector", {"queryrag": "anything"}, timeout=30)
    assert query_error.value.status == 400
    with pytest.raises(SolrError, match="default_model' can't be found in the store"):
        solr.post(f"{bare_collection}/update", json=[_chunk(DOCS[0])], params={"commit": "true"}, timeout=30)
    assert time.monotonic() - began < 10
    with pytest.raises(SolrError, match="model requested 'nope'"):
        solr.get(f"{bare_collection}/vector", {"queryrag": "anything", "model": "nope"}, timeout=30)


def test_an_unreachable_embedding_service_leaves_a_visible_gap(
    solr: SolrClient, settings: Settings, bare_collection: str
) -> None:
    """Solr indexes the chunk without a vector; has_vector=false makes it findable for repair."""
    dead = desired_model(settings)
    dead["params"] = {**dead["params"], "baseUrl": f"http://127.0.0.1:{free_port()}/v1", "maxRetries": 0, "timeout": 2}
    put_model(solr, bare_collection, dead)
    admin.reload_collection(solr, bare_collection)
    solr.post(f"{bare_collection}/update", json=[_chunk(DOCS[1])], params={"commit": "true"}, timeout=60)
    docs = solr.get(f"{bare_collection}/select", {"q": "*:*", "fl": "id,has_vector,vector_384"})["response"]["docs"]
    assert docs == [{"id": "doc-revenue_0", "has_vector": False}]
    missing = solr.get(f"{bare_collection}/select", {"q": "has_vector:false", "rows": 0})["response"]["numFound"]
    assert missing == 1


def test_an_upload_slower_than_the_solr_timeout_is_waited_for_until_the_model_is_stored(
    solr: SolrClient, settings: Settings, bootstrapped: BootstrapReport
) -> None:
    """Solr answers a model's upload once it has loaded it, which a busy node takes longer than
    solr.timeout to do (40 s was seen, against 30): the upload's timeout is not its failure, the
    model is looked for in the store until it is there."""

    def answered_late(method: str, path: str, args: Mapping[str, str]) -> None:
        if method == "PUT":
            time.sleep(2.0)  # stored, but answered after the client's timeout

    proxy = solr_proxy(solr.base_url, after=answered_late)
    model = {**desired_model(settings), "name": "slow_upload_model"}
    delete_model(solr, settings.collection_vector, model["name"])
    with serve(proxy) as front:
        hurried = SolrClient(f"{front}/solr", timeout=0.5, auth=solr.auth)
        put_model(hurried, settings.collection_vector, model)
    assert any(m["name"] == "slow_upload_model" for m in get_models(solr, settings.collection_vector))
    delete_model(solr, settings.collection_vector, model["name"])
