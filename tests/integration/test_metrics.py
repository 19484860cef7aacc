"""GET /metrics (prometheus-client): requests and latency per endpoint, errors per label, the
circuit, answer slots, LLM calls, tokens and latency — in one process, and added up over every
gunicorn worker of a served sidecar."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import urllib3
from flask.testing import FlaskClient
from prometheus_client.parser import text_string_to_metric_families

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import free_port, served_sidecar
from tests.integration.conftest import MEMO, board_world

API = "/Datafari/rest/v2.0"


@pytest.fixture(scope="module")
def world(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return board_world(solr, settings, tmp_path_factory.mktemp("metrics"), "metrics", MEMO).replace(
        retrieval_method="bm25"
    )


@pytest.fixture
def client(world: Settings, fake_llm_server: tuple[FakeLlm, str]) -> Iterator[FlaskClient]:
    yield create_app(world.replace(llm_endpoint=fake_llm_server[1])).test_client()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition, by name and labels."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_count_requests_errors_and_llm_calls(client: FlaskClient, fake_llm: FakeLlm) -> None:
    before = samples(client.get("/metrics").get_data(as_text=True))
    for _ in range(3):
        assert client.get(f"{API}/search/select", query_string={"q": "leave"}).status_code == 200
    answer = client.post(f"{API}/ai/rag", json={"query": "How many days of paid leave do I get?"})
    assert answer.get_json()["status"] == "OK"
    refused = client.post(f"{API}/ai/rag", json={"query": ""})
    assert refused.get_json()["content"]["error"]["label"] == "ragBadRequest"
    response = client.get("/metrics")  # public, like /health: a scraper has no identity
    assert response.status_code == 200 and response.content_type.startswith("text/plain")
    after = samples(response.get_data(as_text=True))

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("datafari_rag_requests_total", endpoint="search.select", method="GET", status="200") == 3
    assert grew("datafari_rag_request_seconds_count", endpoint="search.select") == 3
    assert grew("datafari_rag_errors_total", label="ragBadRequest") == 1
    assert grew("datafari_rag_llm_calls_total", outcome="ok") == 1 and grew("datafari_rag_llm_seconds_count") == 1
    usage = answer.get_json()["content"]["usage"]  # what the LLM reported for the answer
    assert grew("datafari_rag_llm_tokens_total", kind="prompt") == usage["prompt_tokens"] > 0
    assert grew("datafari_rag_llm_tokens_total", kind="completion") == usage["completion_tokens"] > 0
    assert value(after, "datafari_rag_answer_slots_in_use") == 0  # the answer gave its slot back
    assert value(after, "datafari_rag_solr_circuit_open") == 0
    text = response.get_data(as_text=True)
    assert "leave" not in text and "bea" not in text  # counts and times, never a query or a user


def test_a_served_sidecar_adds_up_every_worker(world: Settings) -> None:
    """Under gunicorn (2 workers), every request is counted whichever worker answered it and
    whichever worker answers the scrape."""
    with served_sidecar(
        world.replace(server_workers=2, server_threads=8, server_reserved_threads=4), free_port()
    ) as base:
        http = urllib3.PoolManager(num_pools=1, maxsize=1)  # new connections: spread over the workers
        for _ in range(40):
            http.request("GET", f"{base}{API}/search/select", fields={"q": "pump"}, headers={"Connection": "close"})
        scrapes = [
            samples(http.request("GET", f"{base}/metrics", headers={"Connection": "close"}).data.decode())
            for _ in range(6)
        ]
    for found in scrapes:
        assert value(found, "datafari_rag_requests_total", endpoint="search.select", method="GET", status="200") == 40


STEPS = ("rewrite", "retrieve", "assemble", "pack", "generate", "cite")


def test_each_step_of_an_answer_is_timed_in_server_timing_and_metrics(client: FlaskClient) -> None:
    before = samples(client.get("/metrics").get_data(as_text=True))
    answer = client.post(f"{API}/ai/rag", json={"query": "How many days of paid leave do I get?"})
    assert answer.get_json()["status"] == "OK"
    timing = dict(part.split(";dur=") for part in answer.headers["Server-Timing"].split(", "))
    assert tuple(timing) == STEPS  # the steps of a search's answer, in the order they ran
    assert all(float(ms) >= 0 for ms in timing.values()) and float(timing["retrieve"]) > 0
    after = samples(client.get("/metrics").get_data(as_text=True))
    for step in STEPS:
        counted = "datafari_rag_pipeline_step_seconds_count"
        assert value(after, counted, step=step) == value(before, counted, step=step) + 1, step
