"""The sidecar's /health reports Solr, both collections, the model store and the agent."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import urllib3
from flask import Flask, Response, request
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr.bootstrap import BootstrapReport
from datafari_rag.testing.servers import free_port, serve
from datafari_rag.testing.solr_proxy import solr_proxy


def test_health_is_green_when_everything_is_up(settings: Settings, bootstrapped: BootstrapReport) -> None:
    client = create_app(settings).test_client()
    body = _poll(client, lambda r: r["status"] == "UP")
    response = client.get("/health")
    assert response.status_code == 200, body
    assert body["status"] == "UP"
    assert body["solr"]["version"] == "9.10.1" and body["solr"]["mode"] == "solrcloud"
    assert set(body["collections"]) == {settings.collection_main, settings.collection_vector}
    assert all(c["status"] == "UP" for c in body["collections"].values())
    assert body["agent"]["models"] == [
        "all-MiniLM-L6-v2",
        "datafari-rag-extractive",
        "bge-small-en-v1.5",
        "bge-small-en-v1.5-query",
        "bge-small-en-v1.5-q",
    ]
    [model] = body["modelStore"]["models"]
    assert model["name"] == "default_model"
    assert model["params"]["apiKey"] == "***"  # the store echoes the key; /health never does
    # FileShare's processor, the only chunk writer, is on
    assert body["indexing"] == {"status": "UP", "fileShareProcessor": "on"}


def test_health_says_what_is_down(settings: Settings) -> None:
    dead = settings.replace(
        solr_url=f"http://127.0.0.1:{free_port()}/solr", embeddings_endpoint=f"http://127.0.0.1:{free_port()}/v1"
    )
    client = create_app(dead).test_client()
    body = _poll(client, lambda r: "solr" in r and "agent" in r)
    response = client.get("/health")
    assert response.status_code == 503
    assert body["status"] == "DOWN"
    assert body["solr"]["status"] == "DOWN" and "unreachable" in body["solr"]["error"]
    assert body["agent"]["status"] == "DOWN"


def _poll(client: FlaskClient, done: Callable[[dict[str, Any]], bool], seconds: float = 20) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        report = client.get("/health/ready").get_json()
        if done(report):
            return report
        time.sleep(0.05)
    raise AssertionError(f"not reached within {seconds}s: {report}")


def test_readiness_holds_through_a_slow_agent_and_a_blip_then_tells_an_outage(
    settings: Settings, bootstrapped: BootstrapReport, agent_url: str
) -> None:
    """The checks run in the background: 20 clients asking at once get a steady 200, none of them
    waiting for the agent, while it takes 1.2 s to answer (the old 0.8 s in-request check flapped to 503); one
    failed check is a blip (still 200, counted); health.failures of them in a row is an outage
    (503, the agent DOWN); the next good check is ready again. /health/live stays 200 throughout."""
    real = urllib3.PoolManager()
    state = {"delay": 1.2, "failures": 0, "calls": 0}
    agent = Flask("slow-agent")

    @agent.get("/v1/models")
    def models() -> Response:
        state["calls"] += 1
        if state["failures"] > 0:
            state["failures"] -= 1
            return Response("overloaded", status=500)
        time.sleep(state["delay"])
        upstream = real.request("GET", f"{agent_url}/models")
        return Response(upstream.data, status=upstream.status, content_type="application/json")

    with serve(agent) as slow:
        mine = settings.replace(
            embeddings_endpoint=f"{slow}/v1", health_interval=0.3, health_timeout=3.0, health_failures=2
        )
        app = create_app(mine)
        _poll(app.test_client(), lambda r: r["status"] == "UP")

        def ask(_: int) -> tuple[int, float]:
            began = time.monotonic()
            status = app.test_client().get("/health").status_code
            return status, time.monotonic() - began

        before = state["calls"]
        with ThreadPoolExecutor(20) as pool:
            answers = list(pool.map(ask, range(400)))
        assert {status for status, _ in answers} == {200}
        # no request waited for the agent: it was asked by the background checks only, a few
        # times, not once per request (the latency itself is bench/health.py's)
        assert state["calls"] - before < len(answers) / 20, (state["calls"] - before, len(answers))

        client = app.test_client()
        state["delay"], seen = 0.0, []
        state["failures"] = 1  # one failed check
        calls = state["calls"]
        while state["calls"] < calls + 3:  # that check and two more
            response = client.get("/health/ready")
            seen.append((response.status_code, response.get_json().get("failedChecksInARow")))
            time.sleep(0.02)
        assert {status for status, _ in seen} == {200} and (200, 1) in seen

        state["failures"] = 10_000  # an outage
        down = _poll(client, lambda r: r["status"] == "DOWN")
        assert down["agent"]["status"] == "DOWN" and down["failedChecksInARow"] >= 2
        assert client.get("/health").status_code == 503 and client.get("/health/ready").status_code == 503
        assert client.get("/health/live").status_code == 200 and client.get("/health/live").get_json() == {
            "status": "UP"
        }
        state["failures"] = 0
        assert _poll(client, lambda r: r["status"] == "UP")["agent"]["status"] == "UP"


def test_an_external_llm_is_reported_without_deciding_readiness(
    settings: Settings, bootstrapped: BootstrapReport
) -> None:
    """The LLM answers its model list with the right key (UP, and whether the model is listed); a
    refused key or a dead endpoint is DOWN with why; none of them changes readiness (searches work
    without the LLM), and the key is never shown."""
    llm = Flask("llm")

    @llm.get("/v1/models")
    def models() -> Any:
        if request.headers.get("Authorization") != "Bearer sk-right":
            return {"error": {"message": "Incorrect API key"}}, 401
        return {"object": "list", "data": [{"id": "gpt-4o-mini", "object": "model"}]}

    with serve(llm) as base:
        for key, expected in (("sk-right", "UP"), ("sk-wrong", "DOWN")):
            mine = settings.replace(llm_endpoint=f"{base}/v1", llm_token=key, llm_model="gpt-4o-mini")
            client = create_app(mine).test_client()
            body = _poll(client, lambda r: r.get("llm", {}).get("url") == f"{base}/v1" and r["status"] == "UP")
            assert body["llm"]["status"] == expected and client.get("/health/ready").status_code == 200, body
            assert key not in client.get("/health").get_data(as_text=True)
        assert body["llm"]["error"] == "HTTP 401: ai.api.token is refused"
        # Datafari 6.1's full chat/completions URL is the same endpoint
        full = f"{base}/v1/chat/completions"
        right = settings.replace(llm_endpoint=full, llm_token="sk-right", llm_model="gpt-4o-mini")
        body = _poll(create_app(right).test_client(), lambda r: "llm" in r and r["status"] == "UP")
    assert body["llm"] == {"url": f"{base}/v1", "model": "gpt-4o-mini", "status": "UP", "modelListed": True}
    dead = settings.replace(llm_endpoint=f"http://127.0.0.1:{free_port()}/v1", llm_token="sk-x")
    body = _poll(create_app(dead).test_client(), lambda r: "llm" in r and r["status"] == "UP")
    assert body["llm"]["status"] == "DOWN" and "refused" in body["llm"]["error"].lower(), body["llm"]
    local = _poll(create_app(settings).test_client(), lambda r: r["status"] == "UP")
    assert "llm" not in local  # the local agent is checked as "agent"


def test_a_slow_solr_that_serves_requests_stays_ready_and_a_hung_one_does_not(
    settings: Settings, bootstrapped: BootstrapReport
) -> None:
    """Readiness is "a request sent now would be served": with every check of Solr slower than
    health.timeout (a busy node), the sidecar stays ready while its own searches are answered, and
    while idle as long as Solr answers a patient look; a Solr that answers nothing at all (hung)
    makes it unready after health.failures checks, and ready again at the first good one."""
    state = {"check_delay": 0.0, "hung": False}

    def busy(method: str, path: str, args: Mapping[str, str]) -> None:
        if state["hung"]:
            time.sleep(3)  # past the patient look's solr.timeout: nothing is answered
        elif path.startswith("admin/") or args.get("rows") == "0":
            time.sleep(state["check_delay"])  # the checks' calls: slow, but they answer

    proxy = solr_proxy(settings.solr_url, before=busy)
    with serve(proxy) as front:
        mine = settings.replace(
            solr_url=f"{front}/solr", solr_timeout=2.0, health_interval=0.2, health_timeout=0.3, health_failures=2
        )
        app = create_app(mine)
        client = app.test_client()
        _poll(client, lambda r: r["status"] == "UP")
        state["check_delay"] = 0.6  # every check's first call outlasts health.timeout
        seen = []
        began = time.monotonic()
        while time.monotonic() - began < 4:  # many checks, all slow, while searches are served
            search = client.get("/Datafari/rest/v2.0/search/select", query_string={"q": "leave"})
            assert search.status_code == 200
            seen.append(client.get("/health/ready").status_code)
        report = client.get("/health/ready").get_json()
        assert set(seen) == {200} and report["solr"]["status"] == "SLOW", report
        idle = time.monotonic()
        while time.monotonic() - idle < 2:  # no search: the patient look finds Solr answering
            seen.append(client.get("/health/ready").status_code)
            time.sleep(0.1)
        assert set(seen) == {200}
        state["hung"] = True
        down = _poll(client, lambda r: r["status"] == "DOWN", seconds=60)
        assert down["failedChecksInARow"] >= 2 and client.get("/health/ready").status_code == 503
        state["hung"], state["check_delay"] = False, 0.0
        assert _poll(client, lambda r: r["status"] == "UP", seconds=60)["solr"]["status"] == "UP"
