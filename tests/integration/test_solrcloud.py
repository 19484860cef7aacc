"""A two-node SolrCloud on a ZooKeeper ensemble of three, started as `datafari-rag solr start --nodes 2` does:
collections of 2 shards x 2 replicas, FileShare's update processor chunking every write (through
the sidecar on one node, straight into FileShare on the other), each chunk once and a parent's
chunks on one shard, kNN equal to the global top K of both shards with the query embedded once,
and searches and answers still served with one node killed."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import urllib3
from flask import Flask, Response, request

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.corpus import index_documents
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.solr import SolrClient, SolrError
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.solr.runtime import LocalSolr
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.local_cluster import local_cluster
from datafari_rag.testing.servers import serve

API = "/Datafari/rest/v2.0"
TOPICS = ["boiler pressure", "cooling tower", "forklift licence", "fire drill", "water treatment"]


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[LocalSolr]]:
    with local_cluster(tmp_path_factory.mktemp("cloud"), 2) as local:
        yield local.nodes


@pytest.fixture(scope="module")
def cloud(nodes: list[LocalSolr], settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    mine = settings.replace(
        solr_url=nodes[0].url,
        collection_main="cloud_FileShare",
        collection_vector="cloud_VectorMain",
    )
    bootstrap(SolrClient(mine.solr_url, 120), mine, shards=2, replicas=2)
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
            indexer = Indexer.of(SolrClient(node.url, 120), mine.replace(solr_url=node.url))
            report = index_documents(indexer, docs, progress=False)
            assert report.added == len(docs) and report.failed == 0
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
        # bootstrap spread the leadership: each node leads one shard (Solr had put both on the first)
        leaders = [
            next(r["node_name"] for r in s["replicas"].values() if r.get("leader") == "true") for s in shards.values()
        ]
        assert sorted(leaders) == sorted(status["live_nodes"]), (name, leaders)


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


def _embeddings_proxy(
    agent: str, texts: list[str] | None = None, fails: Callable[[list[str]], bool] | None = None
) -> Flask:
    """The agent (its OpenAI base URL) behind a proxy: the texts of each embedding call are
    appended to ``texts``, and a call whose texts ``fails`` is answered 503 instead."""
    upstream = urllib3.PoolManager()
    app = Flask("embeddings-proxy")

    @app.route("/v1/<path:rest>", methods=["GET", "POST"])
    def forward(rest: str) -> Response:
        if rest == "embeddings":
            asked = (request.get_json(silent=True) or {}).get("input")
            asked = asked if isinstance(asked, list) else [asked]
            if fails is not None and fails(asked):
                return Response('{"error": {"message": "overloaded"}}', status=503, content_type="application/json")
            if texts is not None:
                texts.extend(asked)
        answer = upstream.request(
            request.method, f"{agent}/{rest}", body=request.get_data(), headers={"Content-Type": "application/json"}
        )
        return Response(answer.data, status=answer.status, content_type="application/json")

    return app


def _flaky(texts: list[str]) -> bool:
    """An embedding call holding two or more texts marked FAILEMBED fails, as an embedding service
    failing under one shard leader's batch does; one such text alone is embedded — what Solr's
    distributed retry of a single document sends. A text marked ALWAYSFAIL is never embedded."""
    return sum("FAILEMBED" in str(t) for t in texts) >= 2 or any("ALWAYSFAIL" in str(t) for t in texts)


def _shard(solr: SolrClient, collection: str, route: str) -> tuple[str, str]:
    """The shard documents ``route!…`` land on, and the node name of its leader."""
    status = solr.get("admin/collections", {"action": "CLUSTERSTATUS", "collection": collection, "_route_": route})
    [(name, shard)] = status["cluster"]["collections"][collection]["shards"].items()
    return name, next(r["node_name"] for r in shard["replicas"].values() if r.get("leader") == "true")


def test_a_shard_leader_failing_to_embed_never_gives_200_for_a_parent_without_chunks(
    nodes: list[LocalSolr], settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Two shards on two nodes; the request goes to the node that does not lead the shard whose
    embedding fails, so its documents are forwarded to that shard's leader in one batch. Before:
    Solr's distributor retried only the batch's first document, it succeeded, and the client got
    200 while the others had no chunks. Now the client gets an error naming them, and every
    parent of a 200 has its chunks — straight to Solr and through the sidecar's indexer alike."""
    with serve(_embeddings_proxy(settings.agent_url, fails=_flaky)) as flaky:
        mine = settings.replace(
            solr_url=nodes[0].url,
            collection_main="truth_FileShare",
            collection_vector="truth_VectorMain",
            embeddings_endpoint=f"{flaky}/v1",
            # the failures here last: resending a batch a minute long (the default schedule) only waits
            index_retry_attempts=1,
            index_retry_delay=0.5,
        )
        bootstrap(SolrClient(mine.solr_url, 120), mine, shards=2, replicas=2)
        solr = SolrClient(nodes[0].url, 120)
        failing_shard, leader = _shard(solr, mine.collection_main, "fail")
        entry = next(n for n in nodes if f"127.0.0.1:{n.port}_solr" != leader)
        other = next(f"ok{i}" for i in range(100) if _shard(solr, mine.collection_main, f"ok{i}")[0] != failing_shard)

        def batch(round_: int) -> list[dict[str, Any]]:
            failing = [
                {"id": f"fail!r{round_}-{n}", "title": "pump", "exactContent": f"FAILEMBED pump check {round_} {n}."}
                for n in range(5)
            ]
            fine = [
                {"id": f"{other}!r{round_}-{n}", "title": "valve", "exactContent": f"The valve {n} is checked weekly."}
                for n in range(5)
            ]
            return fine + failing

        def without_chunks(ids: list[str]) -> list[str]:
            for collection in (mine.collection_main, mine.collection_vector):  # a failed request commits nothing
                SolrClient(entry.url, 120).get(f"{collection}/update", {"commit": "true"})
            found = SolrClient(entry.url, 120).get(
                f"{mine.collection_vector}/select",
                {
                    "q": "*:*",
                    "rows": 1000,
                    "fl": "parent_doc",
                    "fq": "parent_doc:(" + " OR ".join(f'"{i}"' for i in ids) + ")",
                },
            )
            return sorted(set(ids) - {d["parent_doc"] for d in found["response"]["docs"]})

        # straight to Solr, through the node that forwards the failing shard's batch
        docs = batch(0)
        try:
            SolrClient(entry.url, 120).post(f"{mine.collection_main}/update", json=docs, params={"commit": "true"})
            answered = 200
        except SolrError as exc:
            answered, message = exc.status, str(exc)
        ids = [d["id"] for d in docs]
        missing = without_chunks(ids)
        assert answered != 200 or not missing, f"200 while {missing} have no chunks"
        assert answered >= 500 and "fail!r0-0" in message and "without chunks" in message
        assert missing and all(i.startswith("fail!") for i in missing)  # the error told the truth

        # through the sidecar's indexer: each document's result is the truth about its chunks
        indexer = Indexer.of(
            SolrClient(entry.url, 120),
            mine.replace(solr_url=entry.url),
        )
        docs = batch(1)
        results = indexer.add(docs, commit=True)
        ok = [r.id for r in results if r.status == "ok"]
        assert ok and not without_chunks(ok), [r.as_dict() for r in results]

        # the sidecar's /update: its status is true to the worst document, each result to its own
        app = create_app(mine.replace(solr_url=entry.url, update_trust_local=True)).test_client()
        docs = [*batch(2)[:3], {"id": "fail!never", "title": "pump", "exactContent": "ALWAYSFAIL pump note."}]
        answer = app.post("/update", json=docs, query_string={"commit": "true"})
        body = answer.get_json()
        assert answer.status_code == 503 and body["responseHeader"]["status"] == 503, body
        assert body["added"] == 3 and body["failed"] == 1
        [refused] = [r for r in body["results"] if r["status"] == "error"]
        assert refused["id"] == "fail!never" and refused["code"] == 503 and "without chunks" in refused["error"]
        assert not without_chunks([d["id"] for d in docs[:3]]) and without_chunks(["fail!never"])


def test_writes_resume_within_10_s_of_a_node_going_silent(cloud: Settings, nodes: list[LocalSolr]) -> None:
    """A node that vanishes without a word (frozen: its connections open, nothing answered, as a
    machine cut off the network) is declared gone by ZooKeeper after solr.local.zkSessionTimeout
    (6 s; Solr's default 30 s stopped every write for about 35 s), and writes through the other
    node — parents and their chunks — succeed again within 10 s."""
    os.kill(nodes[1].pid(), signal.SIGSTOP)
    silent, solr, last_failure, n = time.monotonic(), SolrClient(nodes[0].url, 3), None, 0
    try:
        while time.monotonic() - silent < 20:
            n += 1
            doc = {"id": f"silent-{n}", "title": "fire drill", "exactContent": f"Fire drill {n}: meet at gate B."}
            sent = time.monotonic() - silent
            try:
                solr.post(f"{cloud.collection_main}/update", json=[doc], params={"commit": "true"})
            except SolrError:
                last_failure = sent  # when the failed write was sent
            time.sleep(0.2)
    finally:
        os.kill(nodes[1].pid(), signal.SIGCONT)
    assert last_failure is None or last_failure < 10, (
        f"a write sent {last_failure:.1f} s after the node went silent failed"
    )
    chunks = SolrClient(nodes[0].url, 30).get(
        f"{cloud.collection_vector}/select", {"q": f'parent_doc:"silent-{n}"', "rows": 0}
    )
    assert chunks["response"]["numFound"] >= 1  # the last write is whole
    deadline = time.monotonic() + 120  # node 2 back in the cluster for the next test
    while (
        len(SolrClient(nodes[0].url).get("admin/collections", {"action": "CLUSTERSTATUS"})["cluster"]["live_nodes"]) < 2
    ):
        assert time.monotonic() < deadline, "node 2 did not come back"
        time.sleep(1)


def test_a_query_on_shards_of_two_nodes_is_embedded_once(cloud: Settings, nodes: list[LocalSolr]) -> None:
    """The node a client calls embeds the query and sends the vector to the other node's shard
    (``queryVector``): the embedding service sees each question once, not once per node, and the
    answer is the one each shard embedding for itself gives."""
    texts: list[str] = []
    with serve(_embeddings_proxy(cloud.embeddings_endpoint, texts)) as proxy:
        mine = cloud.replace(
            collection_main="ship_FileShare", collection_vector="ship_VectorMain", embeddings_endpoint=f"{proxy}/v1"
        )
        solr = SolrClient(nodes[0].url, 120)
        bootstrap(solr, mine, shards=2, replicas=1)
        docs = [
            {"id": f"ship-{n}", "title": t, "exactContent": f"The {t} procedure, step {n}. " * 20}
            for n, t in enumerate(TOPICS)
        ]
        solr.post(f"{mine.collection_main}/update", json=docs, params={"commit": "true"})
        solr.get(f"{mine.collection_vector}/update", {"commit": "true"})
        status = solr.get("admin/collections", {"action": "CLUSTERSTATUS", "collection": mine.collection_vector})
        hosts = {
            r["node_name"]
            for s in status["cluster"]["collections"][mine.collection_vector]["shards"].values()
            for r in s["replicas"].values()
        }
        assert len(hosts) == 2  # one shard on each node: the other node's shard is asked over HTTP
        for question in ["how is the boiler pressure checked", "who may drive a forklift", "fire drill"]:
            texts.clear()
            hits = solr.get(
                f"{mine.collection_vector}/vector", {"queryrag": question, "topK": 3, "rows": 3, "fl": "id,score"}
            )
            assert texts == [question]
            found = [(d["id"], d["score"]) for d in hits["response"]["docs"]]
            # each shard searched alone (distrib=false), embedding for itself: the same nearest chunks
            alone = [
                d
                for node in nodes
                for d in SolrClient(node.url, 120).get(
                    f"{mine.collection_vector}/vector",
                    {"queryrag": question, "topK": 3, "fl": "id,score", "distrib": "false"},
                )["response"]["docs"]
            ]
            best = [(d["id"], d["score"]) for d in sorted(alone, key=lambda d: -d["score"])[:3]]
            assert found == best, question  # the same chunks, the same scores: the same vector


def test_searches_and_answers_survive_a_killed_node(
    cloud: Settings, nodes: list[LocalSolr], fake_llm_server: tuple[FakeLlm, str], fake_llm: FakeLlm
) -> None:
    # the sidecar knows both nodes, the one about to die first: it passes over to the other
    both = f"{nodes[1].url},{nodes[0].url}"
    client = create_app(cloud.replace(llm_endpoint=fake_llm_server[1], solr_url=both)).test_client()
    before = client.get(f"{API}/search/select", query_string={"q": "procedure", "rows": 0}).get_json()
    os.kill(nodes[1].pid(), signal.SIGKILL)  # no goodbye to ZooKeeper: its replicas just stop answering

    for _ in range(5):
        after = client.get(f"{API}/search/select", query_string={"q": "procedure", "rows": 0}).get_json()
        assert after["response"]["numFound"] == before["response"]["numFound"] == 2 * len(TOPICS)
        knn = client.get(f"{API}/search/vector", query_string={"queryrag": "fire drill", "topK": 3}).get_json()
        assert len(knn["response"]["docs"]) == 3
        answer = client.post(f"{API}/ai/rag", json={"query": "What is the fire drill procedure?"}).get_json()
        assert answer["status"] == "OK", answer
