"""A local cluster without a single point of failure, as `datafari-rag solr start --nodes 3` starts
it: three Solr nodes and an ensemble of three ZooKeeper servers, each its own process; collections
of 3 shards x 2 replicas, each node leading one shard after bootstrap. Each node in turn is lost
as a machine is — its Solr node and its ZooKeeper server killed at once, without a goodbye — while
clients search, ask and index through the sidecar (which knows every node): every search and
every answer succeeds, every document sent is written whole (parent and chunks), none failed, and
the sidecar's readiness stays 200 throughout (a load balancer keeps it in).
Then the machine comes back and its replicas recover before the next one is lost.

A machine can also freeze, or be cut off the network: its connections stay open and nothing
answers (SIGSTOP to its node and its ZooKeeper server for 20 s). Searches and answers all succeed
and readiness stays 200: a shard part left unanswered past Solr's shard socketTimeout (10 s, the
local runtime's solr.xml) fails, and the sidecar sends the read again. How long a read then takes
depends on whether the node it asked was connected to the frozen ZooKeeper server (it goes on
choosing the frozen node's replicas until its ZooKeeper client moves to another server): 10.4 s
in one run, the freeze's whole 20 s in another, so reads are bounded only for a kill. Writes
through a freeze are not part of this test: the frozen node, when it wakes, keeps acting as its
shards' leader while another replica leads (Solr answers "… now thinks it is the leader! Failing
the request to let the client retry!" for minutes)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import urllib3

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.corpus import index_documents
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.solr import SolrClient, admin
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.solr.runtime import LocalCluster, LocalSolr
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.local_cluster import local_cluster
from datafari_rag.testing.servers import serve

API = "/Datafari/rest/v2.0"
TOPICS = ["boiler pressure", "cooling tower", "forklift licence", "fire drill", "water treatment"]
BEFORE, AFTER = 2.0, 20.0  # seconds of load before the kill, and after it
# the longest a search or an answer may take through a loss or a freeze: Solr's shard socketTimeout
# (10 s), the sidecar's resends (0.25 s, 0.75 s), and the request itself
READ_BOUND = 15.0


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with local_cluster(tmp_path_factory.mktemp("three"), 3) as local:
        yield local


@pytest.fixture(scope="module")
def cloud(three: LocalCluster, settings: Settings) -> Settings:
    mine = settings.replace(
        solr_url=three.urls,
        collection_main="three_FileShare",
        collection_vector="three_VectorMain",
    )
    report = bootstrap(SolrClient(mine.solr_url, 120), mine, shards=3, replicas=2)
    assert any("leaders" in line for line in report.lines()), report.lines()
    docs = [
        {"id": f"three-{n}", "title": topic, "exactContent": f"The {topic} procedure, part {n}. " * 20}
        for n, topic in enumerate(TOPICS * 2)
    ]
    solr = SolrClient(mine.solr_url, 120)
    solr.post(f"{mine.collection_main}/update", json=docs, params={"commit": "true"})
    return mine


def _recovered(solr: SolrClient, node: LocalSolr) -> bool:
    """The node live and every replica it holds active again (recovered from its peers)."""
    name = f"127.0.0.1:{node.port}_solr"
    cluster = solr.get("admin/collections", {"action": "CLUSTERSTATUS"})["cluster"]
    states = [
        r["state"]
        for c in cluster["collections"].values()
        for s in c["shards"].values()
        for r in s["replicas"].values()
        if r["node_name"] == name
    ]
    return name in cluster["live_nodes"] and bool(states) and all(state == "active" for state in states)


def _kill(pid: int | None) -> None:
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


class Load:
    """Clients working side by side until told to stop; every call's outcome is kept with the time
    it was sent."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.failures: list[tuple[str, float, str]] = []
        self.calls: dict[str, int] = {}
        self.longest: dict[str, tuple[float, float]] = {}  # per client: (seconds, sent at)
        self.began = time.monotonic()
        self.threads: list[threading.Thread] = []

    def run(self, name: str, call: Callable[[int], str | None]) -> None:
        def loop() -> None:
            n = 0
            while not self.stop.is_set():
                n += 1
                sent = time.monotonic() - self.began
                try:
                    problem = call(n)
                except Exception as exc:
                    problem = f"{type(exc).__name__}: {exc}"
                self.calls[name] = self.calls.get(name, 0) + 1
                took = time.monotonic() - self.began - sent
                if took > self.longest.get(name, (0.0, 0.0))[0]:
                    self.longest[name] = (round(took, 1), round(sent, 1))
                if problem:
                    self.failures.append((name, round(sent, 1), problem[:300]))

        self.threads.append(threading.Thread(target=loop, name=name, daemon=True))
        self.threads[-1].start()

    def finish(self, least: int, within: float) -> None:
        """Stops once every client has made ``least`` calls (a call sent before a loss may wait
        the indexer's two minutes of retries), or after ``within`` seconds more."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline and any(self.calls.get(t.name, 0) < least for t in self.threads):
            time.sleep(0.5)
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=180)


@pytest.mark.parametrize(
    ("lost", "how"),
    [(0, "kill"), (1, "kill"), (2, "kill"), (1, "stop")],
    ids=["node1", "node2", "node3", "node2-frozen"],
)
def test_losing_any_one_node_keeps_search_answers_and_indexing_working(
    three: LocalCluster,
    cloud: Settings,
    lost: int,
    how: str,
    fake_llm_server: tuple[FakeLlm, str],
    fake_llm: FakeLlm,
    tmp_path: Path,
) -> None:
    solr = SolrClient(cloud.solr_url, 60)
    node, zookeeper = three.nodes[lost], three.zookeepers[lost]
    leads = [s for s, n in admin.leaders(solr, cloud.collection_main).items() if n == f"127.0.0.1:{node.port}_solr"]
    indexer = Indexer.of(SolrClient(cloud.solr_url, 60), cloud)
    http = urllib3.PoolManager(maxsize=8, retries=False, timeout=urllib3.Timeout(total=60))
    sent: list[str] = []

    try:
        with serve(create_app(cloud.replace(llm_endpoint=fake_llm_server[1]))) as sidecar:

            def search(_: int) -> str | None:
                got = http.request("GET", f"{sidecar}{API}/search/select", fields={"q": "procedure", "rows": "0"})
                found = got.json().get("response", {}).get("numFound", -1) if got.status == 200 else -1
                return None if found == 2 * len(TOPICS) else f"{got.status} {got.data[:200]!r}"

            def vector(_: int) -> str | None:
                got = http.request(
                    "GET", f"{sidecar}{API}/search/vector", fields={"queryrag": "fire drill", "topK": "3"}
                )
                docs = got.json().get("response", {}).get("docs", []) if got.status == 200 else []
                return None if len(docs) == 3 else f"{got.status} {got.data[:200]!r}"

            def answer(_: int) -> str | None:
                got = http.request(
                    "POST", f"{sidecar}{API}/ai/rag", json={"query": "What is the fire drill procedure?"}
                )
                status = (
                    got.json().get("status")
                    if got.headers.get("Content-Type", "").startswith("application/json")
                    else None
                )
                return None if got.status == 200 and status == "OK" else f"{got.status} {got.data[:200]!r}"

            def index(n: int) -> str | None:
                docs = [
                    {
                        "id": f"lost{lost}-{n}-{k}",
                        "title": "pump",
                        "exactContent": f"Pump {n}.{k} was checked on site {lost}.",
                    }
                    for k in range(3)
                ]
                sent.extend(d["id"] for d in docs)
                report = index_documents(indexer, docs, progress=False)
                return None if report.added == len(docs) and not report.failed else str(report)

            def ready(_: int) -> str | None:  # a load balancer's probe: every request above succeeds
                got = http.request("GET", f"{sidecar}/health/ready")
                time.sleep(0.25)
                return None if got.status == 200 else f"{got.status} {got.data[:300]!r}"

            deadline = time.monotonic() + 120  # a load balancer takes the sidecar in once it is ready
            while http.request("GET", f"{sidecar}/health/ready").status != 200:
                assert time.monotonic() < deadline, "the sidecar did not become ready"
                time.sleep(0.1)
            load = Load()
            clients = {"search": search, "vector": vector, "answer": answer, "ready": ready} | (
                {"index": index} if how == "kill" else {}
            )
            for name, call in clients.items():
                load.run(name, call)
            time.sleep(BEFORE)
            if how == "kill":
                _kill(node.pid())
                _kill(zookeeper.pid())
            else:  # a machine cut off the network: its connections open, nothing answered
                os.kill(node.pid(), signal.SIGSTOP)  # type: ignore[arg-type]
                os.kill(zookeeper.pid(), signal.SIGSTOP)  # type: ignore[arg-type]
            killed = time.monotonic() - load.began
            time.sleep(AFTER)
            if how == "stop":
                os.kill(node.pid(), signal.SIGCONT)  # type: ignore[arg-type]
                os.kill(zookeeper.pid(), signal.SIGCONT)  # type: ignore[arg-type]
            load.finish(least=3, within=180)

        print(
            f"\nlost node{lost + 1} ({how}) at {killed:.1f}s: calls {load.calls}, failed {len(load.failures)}, "
            f"sent {len(sent)}, longest (s, sent at) {load.longest}"
        )
        assert not load.failures, f"killed at {killed:.1f}s; calls {load.calls}; failures: {load.failures[:10]}"
        assert all(load.calls.get(name, 0) >= 3 for name in clients), load.calls
        reads = ("search", "vector", "answer") if how == "kill" else ()  # a freeze: see the module's words
        slow = {n: took for n, took in load.longest.items() if n in reads and took[0] > READ_BOUND}
        assert not slow, f"reads slower than {READ_BOUND} s (seconds, sent at): {slow}"
        if how == "kill":  # every document sent is written whole
            for collection in (cloud.collection_main, cloud.collection_vector):
                solr.get(f"{collection}/update", {"commit": "true"})
            parents = {
                d["id"]
                for d in solr.get(
                    f"{cloud.collection_main}/select", {"q": f"id:lost{lost}-*", "rows": 10000, "fl": "id"}
                )["response"]["docs"]
            }
            chunked = solr.get(
                f"{cloud.collection_vector}/select",
                {
                    "q": f"parent_doc:lost{lost}-*",
                    "rows": 0,
                    "facet": "true",
                    "facet.field": "parent_doc",
                    "facet.limit": -1,
                },
            )["facet_counts"]["facet_fields"]["parent_doc"]
            with_chunks = {chunked[i] for i in range(0, len(chunked), 2) if chunked[i + 1] > 0}
            assert parents == set(sent) == with_chunks, (len(sent), len(parents), len(with_chunks))
        # bootstrap spread the leaders and a node that comes back leads nothing: each node killed led
        # a shard of its own, whose writes waited for a new leader
        assert leads, "the lost node led no shard"
    finally:
        # the machine comes back — after a failure too, so that the next loss is one machine's:
        # its ZooKeeper server rejoins the ensemble, its node its shards
        for process in (node, zookeeper) if how == "stop" else ():
            if (pid := process.pid()) is not None:
                os.kill(pid, signal.SIGCONT)
        if zookeeper.pid() is None:
            zookeeper.start(120)
        if node.pid() is None:
            node.start(180)
        deadline = time.monotonic() + 180
        while not _recovered(solr, node):
            assert time.monotonic() < deadline, "the node's replicas did not recover"
            time.sleep(1)
