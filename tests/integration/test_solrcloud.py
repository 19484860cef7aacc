"""A two-node SolrCloud on one ZooKeeper, started as `datafari-rag solr start --nodes 2` does:
collections of 2 shards x 2 replicas, FileShare's update processor chunking every write (through
the sidecar on one node, straight into FileShare on the other), each chunk once and a parent's
chunks on one shard, kNN equal to the global top K of both shards, and searches and answers still
served with one node killed."""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Iterator
from typing import Any
from unittest import mock

import numpy as np
import pytest

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.corpus import index_documents
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.outbox import Outbox
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.solr.runtime import LocalSolr, cluster
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import free_port

API = "/Datafari/rest/v2.0"
TOPICS = ["boiler pressure", "cooling tower", "forklift licence", "fire drill", "water treatment"]


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[LocalSolr]]:
    port = free_port()
    while not all(_free(p) for p in (port, port + 1, port + 1000)):
        port = free_port()
    with mock.patch.dict(os.environ, {"DATAFARI_RAG_VAR": str(tmp_path_factory.mktemp("cloud"))}):
        members = cluster(port, 2)
        try:
            for node in members:
                node.start(timeout=180)
            yield members
        finally:
            for node in reversed(members):
                node.stop()


@pytest.fixture(scope="module")
def cloud(nodes: list[LocalSolr], settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    mine = settings.replace(
        solr_url=nodes[0].url,
        collection_main="cloud_FileShare",
        collection_vector="cloud_VectorMain",
        vector_embedding_mode="processor",
    )
    bootstrap(SolrClient(mine.solr_url, 120), mine, shards=2, replicas=2)
    outbox = Outbox(tmp_path_factory.mktemp("outbox") / "o.sqlite")
    for i, node in enumerate(nodes):
        docs = [
            {
                "id": f"cloud-{i}-{n}",
                "title": topic,
                "exactContent": f"The {topic} procedure of site {'north' if i else 'south'}, part {n}. " * 30,
            }
            for n, topic in enumerate(TOPICS)
        ]
        if i == 0:  # through the sidecar's indexer, which forwards parents to FileShare
            indexer = Indexer.of(SolrClient(node.url, 120), mine.replace(solr_url=node.url), outbox)
            report = index_documents(indexer, docs, progress=False)
            assert report.added == len(docs) and report.failed == report.deferred == 0
        else:  # straight into FileShare, as ManifoldCF writes
            SolrClient(node.url, 120).post(f"{mine.collection_main}/update", json=docs, params={"commit": "true"})
    return mine


def test_collections_span_both_nodes(cloud: Settings, nodes: list[LocalSolr]) -> None:
    status = SolrClient(nodes[0].url).get("admin/collections", {"action": "CLUSTERSTATUS"})["cluster"]
    assert len(status["live_nodes"]) == 2
    for name in (cloud.collection_main, cloud.collection_vector):
        shards = status["collections"][name]["shards"]
        assert len(shards) == 2
        for shard in shards.values():
            assert {r["node_name"] for r in shard["replicas"].values()} == set(status["live_nodes"])


def test_each_chunk_is_written_once(cloud: Settings, nodes: list[LocalSolr]) -> None:
    solr = SolrClient(nodes[1].url)
    docs = solr.get(f"{cloud.collection_vector}/select", {"q": "*:*", "rows": 1000, "fl": "id,chunk_count"})
    ids = [d["id"] for d in docs["response"]["docs"]]
    assert len(ids) == len(set(ids)) == docs["response"]["numFound"]
    parents = {i.rsplit("_", 1)[0] for i in ids}
    assert len(parents) == 2 * len(TOPICS)
    assert sum(1 for d in docs["response"]["docs"]) == sum(
        d["chunk_count"] for d in {d["id"].rsplit("_", 1)[0]: d for d in docs["response"]["docs"]}.values()
    )


def vector_docs(solr: SolrClient, cloud: Settings) -> list[dict[str, Any]]:
    fields = "id,parent_doc,parent_version,allow_token_document,[shard]"
    return solr.get(f"{cloud.collection_vector}/internal", {"q": "*:*", "rows": 1000, "fl": fields})["response"]["docs"]


def test_a_parents_chunks_live_on_one_shard_and_follow_an_atomic_update(
    cloud: Settings, nodes: list[LocalSolr]
) -> None:
    solr = SolrClient(nodes[1].url)
    shards: dict[str, set[str]] = {}
    for doc in vector_docs(solr, cloud):
        shards.setdefault(doc["parent_doc"], set()).add(doc["[shard]"])
    assert len(shards) == 2 * len(TOPICS) and all(len(s) == 1 for s in shards.values())
    assert len(set().union(*shards.values())) == 2  # and the parents spread over both shards

    # an ACL change straight into FileShare, through each node: re-chunked once, by the leader
    for node, parent in zip(nodes, ("cloud-1-0", "cloud-0-1"), strict=True):
        SolrClient(node.url).post(
            f"{cloud.collection_main}/update",
            json=[{"id": parent, "allow_token_document": {"set": ["hr-only"]}}],
            params={"commit": "true"},
        )
        version = solr.get(f"{cloud.collection_main}/get", {"id": parent, "fl": "_version_"})["doc"]["_version_"]
        chunks = [d for d in vector_docs(solr, cloud) if d["parent_doc"] == parent]
        assert chunks and {(d["parent_version"], d["allow_token_document"][0]) for d in chunks} == {
            (version, "hr-only")
        }
    # anonymous, straight to Solr: the changed parents' chunks are gone from its view
    public = solr.get(f"{cloud.collection_vector}/select", {"q": "*:*", "rows": 1000, "fl": "parent_doc"})
    assert {d["parent_doc"] for d in public["response"]["docs"]} == set(shards) - {"cloud-1-0", "cloud-0-1"}
    solr.post(
        f"{cloud.collection_main}/update",
        json=[{"id": p, "allow_token_document": {"set": None}} for p in ("cloud-1-0", "cloud-0-1")],
        params={"commit": "true"},
    )
    public = solr.get(f"{cloud.collection_vector}/select", {"q": "*:*", "rows": 1000, "fl": "parent_doc"})
    assert {d["parent_doc"] for d in public["response"]["docs"]} == set(shards)  # public again


def test_knn_through_the_sidecar_is_the_global_top_k(
    cloud: Settings, nodes: list[LocalSolr], chunk_embedder: Any
) -> None:
    query = "how do I renew a forklift licence"
    client = create_app(cloud).test_client()
    hits = client.get(f"{API}/search/vector", query_string={"queryrag": query, "topK": 5, "fl": "id"}).get_json()
    got = [d["id"] for d in hits["response"]["docs"]]
    everything = SolrClient(nodes[0].url).get(
        f"{cloud.collection_vector}/select", {"q": "*:*", "rows": 1000, "fl": "id,vector_384"}
    )["response"]["docs"]
    vectors = np.array([d["vector_384"] for d in everything])
    scores = vectors @ np.array(chunk_embedder.embed([query])[0])
    ranked = np.argsort(-scores)
    best = [everything[i]["id"] for i in ranked[:5]]
    assert scores[ranked[4]] - scores[ranked[5]] > 1e-4  # a clear top 5: no tie at its edge
    assert set(got) == set(best) and got[0] == best[0]


def test_searches_and_answers_survive_a_killed_node(
    cloud: Settings, nodes: list[LocalSolr], fake_llm_server: tuple[FakeLlm, str], fake_llm: FakeLlm
) -> None:
    client = create_app(cloud.replace(llm_endpoint=fake_llm_server[1])).test_client()
    before = client.get(f"{API}/search/select", query_string={"q": "procedure", "rows": 0}).get_json()
    os.kill(nodes[1].pid(), signal.SIGKILL)  # no goodbye to ZooKeeper: its replicas just stop answering
    for _ in range(5):
        after = client.get(f"{API}/search/select", query_string={"q": "procedure", "rows": 0}).get_json()
        assert after["response"]["numFound"] == before["response"]["numFound"] == 2 * len(TOPICS)
        knn = client.get(f"{API}/search/vector", query_string={"queryrag": "fire drill", "topK": 3}).get_json()
        assert len(knn["response"]["docs"]) == 3
        answer = client.post(f"{API}/ai/rag", json={"query": "What is the fire drill procedure?"}).get_json()
        assert answer["status"] == "OK", answer
