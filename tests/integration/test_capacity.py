"""A hung LLM holds only the answer slots: searches and health checks keep their own threads."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import requests

from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.sample import index_sample
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import BootstrapReport
from datafari_rag.testing.servers import free_port, served_sidecar, stub_llm_process

API = "/Datafari/rest/v2.0"


def test_searches_never_wait_behind_a_hung_llm(
    solr: SolrClient, settings: Settings, bootstrapped: BootstrapReport
) -> None:
    index_sample(Indexer.of(solr, settings))
    with stub_llm_process(free_port(), delay=6.0) as llm:
        mine = settings.replace(
            llm_endpoint=llm, server_workers=1, server_threads=12, server_reserved_threads=4, llm_deadline=20
        )
        with served_sidecar(mine, free_port()) as base, ThreadPoolExecutor(max_workers=16) as pool:
            asks = [
                pool.submit(requests.post, f"{base}{API}/ai/rag", json={"query": "paid annual leave"}, timeout=30)
                for _ in range(16)
            ]
            time.sleep(1.5)  # every answer slot is now held by a call the LLM does not answer
            for _ in range(5):
                began = time.monotonic()
                found = requests.get(f"{base}{API}/search/select", params={"q": "leave"}, timeout=30)
                assert found.status_code == 200 and found.json()["response"]["numFound"] >= 1
                assert time.monotonic() - began < 1.0
            began = time.monotonic()
            assert requests.get(f"{base}/health", timeout=30).status_code in (200, 503)
            assert time.monotonic() - began < 1.5
            bodies = [a.result().json() for a in asks]
    answered = [b for b in bodies if b["status"] == "OK"]
    busy = [b for b in bodies if "Too many answers" in (b["content"].get("error") or {}).get("reason", "")]
    assert len(answered) == 8 and len(busy) == 8  # 12 threads, 4 kept for searches
