"""Solr restarted under load: the sidecar, as production runs it (gunicorn, two workers, each with
its own circuit), serves again as soon as Solr does. Clients search without pause; Solr's node is
killed, comes back a few seconds later, and from the moment Solr itself answers a search again
the sidecar may fail only while a worker's open circuit cools down (``solr.circuit.cooldown``):
no request sent after that fails, and readiness is green again within its own checks."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import urllib3

from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient, SolrError, admin
from datafari_rag.solr.bootstrap import bootstrap, vector_fields
from datafari_rag.solr.runtime import LocalCluster
from datafari_rag.solr.security_json import write_config
from datafari_rag.solr.service_account import credentials
from datafari_rag.testing.local_cluster import local_cluster
from datafari_rag.testing.servers import free_port, served_sidecar

API = "/Datafari/rest/v2.0"
CLIENTS, DOWN, AFTER = 4, 4.0, 15.0  # searching clients; seconds Solr stays dead; seconds of load after
EXTRA_CORES = 8


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory, settings: Settings) -> Iterator[LocalCluster]:
    """One node, secured with the session's service account (the served sidecar refuses an open Solr)."""
    folder = tmp_path_factory.mktemp("restart")
    with local_cluster(folder, 1, security_json=write_config(settings, folder / "security.json")) as local:
        yield local


def _searches(solr: SolrClient, collection: str) -> bool:
    try:
        return solr.get(f"{collection}/select", {"q": "*:*", "rows": 0})["response"]["numFound"] > 0
    except Exception:
        return False


def test_the_sidecar_serves_again_as_soon_as_solr_does(
    single: LocalCluster, settings: Settings, tmp_path: Path
) -> None:
    mine = settings.replace(
        solr_url=single.urls,
        collection_main="restart_FileShare",
        collection_vector="restart_VectorMain",
        retrieval_method="bm25",
        store_url=f"sqlite:///{tmp_path / 'store.db'}",
        health_interval=1.0,
    )
    solr = SolrClient(mine.solr_url, 30, credentials(mine))
    bootstrap(solr, mine)
    docs = [{"id": f"restart-{n}", "title": "valve", "exactContent": f"Valve {n} is checked weekly."} for n in range(5)]
    solr.post(f"{mine.collection_main}/update", json=docs, params={"commit": "true"})
    direct = SolrClient(mine.solr_url, 2, credentials(mine))  # Solr's own view, without the sidecar's circuit
    node = single.nodes[0]
    outcomes: list[tuple[float, bool]] = []  # (sent, succeeded)
    stop = threading.Event()

    with served_sidecar(mine, free_port()) as sidecar:
        http = urllib3.PoolManager(maxsize=CLIENTS, retries=False, timeout=urllib3.Timeout(total=10))

        def client() -> None:
            while not stop.is_set():
                sent = time.monotonic()
                try:
                    got = http.request("GET", f"{sidecar}{API}/search/select", fields={"q": "valve", "rows": "1"})
                    ok = got.status == 200 and got.json()["response"]["numFound"] == len(docs)
                except Exception:
                    ok = False
                outcomes.append((sent, ok))
                time.sleep(0.02)

        threads = [threading.Thread(target=client, daemon=True) for _ in range(CLIENTS)]
        for thread in threads:
            thread.start()
        time.sleep(2)
        pid = node.pid()
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        killed = time.monotonic()
        time.sleep(DOWN)
        node.start(180)
        while not _searches(direct, mine.collection_main):
            assert time.monotonic() - killed < 240, "Solr did not answer again"
            time.sleep(0.1)
        back = time.monotonic()
        time.sleep(AFTER)
        ready = http.request("GET", f"{sidecar}/health/ready")
        stop.set()
        for thread in threads:
            thread.join(timeout=30)

    settle = back + mine.solr_circuit_cooldown + 1.0  # a circuit opened just before Solr came back
    late = [round(sent - back, 1) for sent, ok in outcomes if sent >= settle and not ok]
    during = sum(1 for sent, ok in outcomes if killed <= sent < back and not ok)
    after = [ok for sent, ok in outcomes if sent >= settle]
    print(
        f"\nSolr down {back - killed:.1f} s: {during} failed while down; after it answered again:"
        f" {sum(1 for s, ok in outcomes if back <= s < settle and not ok)} failed in the first"
        f" {settle - back:.0f} s, {len(late)} of {len(after)} after"
    )
    assert during > 0, "the harness never saw Solr down"
    assert len(after) > 100 and not late, f"failed after Solr answered again (seconds after): {late[:20]}"
    assert ready.status == 200, ready.data[:300]


def test_bootstrap_right_after_a_restart_waits_for_the_cores_to_load(single: LocalCluster, settings: Settings) -> None:
    """A node answers (401) seconds before its cores are loaded: `make run` a second time, whose
    bootstrap followed at once, failed with "Solr error 404 on /VectorMain/schema/fieldtypes"."""
    mine = settings.replace(
        solr_url=single.urls, collection_main="reboot_FileShare", collection_vector="reboot_VectorMain"
    )
    solr = SolrClient(mine.solr_url, 30, credentials(mine))
    bootstrap(solr, mine)
    existing = set(admin.list_collections(solr))
    for n in range(EXTRA_CORES):  # a node holding a few more cores, as one with other collections does
        if f"reboot_extra{n}" not in existing:
            admin.create_collection(solr, f"reboot_extra{n}", mine.collection_vector, 1, 1)
    node = single.nodes[0]
    assert node.stop()
    node.start(180)  # returns as soon as Solr answers
    with pytest.raises(SolrError) as loading:  # the node answers, its cores are not there yet
        solr.get(f"{mine.collection_vector}/schema/fieldtypes")
    assert loading.value.status == 404
    with pytest.raises(SolrError, match=r"reboot_VectorMain has shards with no active replica .*shard1: down@"):
        admin.wait_served(solr, mine.collection_vector, timeout=0)  # the error names what is not served
    report = bootstrap(solr, mine)
    assert report.reloaded == [mine.collection_vector, mine.collection_main]
    assert vector_fields(solr, mine.collection_vector)[mine.vector_field] == 384
    assert not admin.unserved_shards(solr, mine.collection_main)
