"""ai/stream: Datafari 7.0 NDJSON and chat-core SSE from one event stream, on the real Solr."""

from __future__ import annotations

import itertools
import json
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.conversations.store import ConversationStore
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.sample import index_sample
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import BootstrapReport
from datafari_rag.store.database import open_engine
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import free_port, serve, served_process, served_sidecar, settings_env
from tests.integration.conftest import trusted_users

API = "/Datafari/rest/v2.0"
ANSWER = "Employees get twenty five days of paid leave every year."


@pytest.fixture(scope="module")
def corpus(solr: SolrClient, settings: Settings, bootstrapped: BootstrapReport) -> None:
    index_sample(Indexer.of(solr, settings))


@pytest.fixture
def app_settings(settings: Settings, fake_llm_server: tuple[FakeLlm, str], corpus: None) -> Settings:
    return settings.replace(llm_endpoint=fake_llm_server[1])


@pytest.fixture
def client_for(app_settings: Settings, fake_llm: FakeLlm) -> Callable[..., FlaskClient]:
    fake_llm.reset(lambda prompt: ANSWER)
    return lambda **o: create_app(app_settings.replace(**o)).test_client()


def ndjson(client: FlaskClient, **body: Any) -> list[dict[str, Any]]:
    response = client.post(f"{API}/ai/stream", json=body)
    assert response.mimetype == "application/x-ndjson"
    return [json.loads(line) for line in response.get_data(as_text=True).splitlines()]


def sse(client: FlaskClient, **body: Any) -> list[dict[str, Any]]:
    response = client.post(f"{API}/ai/stream", json=body, headers={"Accept": "text/event-stream"})
    assert response.mimetype == "text/event-stream"
    text = response.get_data(as_text=True)
    return [json.loads(block[len("data: ") :]) for block in text.split("\n\n") if block.startswith("data: ")]


def test_ndjson_events_in_order(client_for: Callable[..., FlaskClient], fake_llm: FakeLlm) -> None:
    events = ndjson(client_for(), query="How many days of paid annual leave?")
    types = [e["type"] for e in events]
    assert types[0] == "stream.started" and types[-1] == "stream.completed"
    assert all(set(e) == {"type", "data", "ts"} and isinstance(e["ts"], int) for e in events)
    assert types.index("sources.final") < types.index("message.delta")
    phases = [e["data"]["name"] for e in events if e["type"] == "phase"]
    assert phases == ["rag:retrieval", "rag:response generation"]
    deltas = "".join(e["data"]["text"] for e in events if e["type"] == "message.delta")
    final = next(e for e in events if e["type"] == "message.final")["data"]
    assert deltas == final["text"] == ANSWER
    assert final["usage"] == {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18, "estimated": False}
    assert events[-1]["data"] == {"status": "OK"}
    sources = next(e for e in events if e["type"] == "sources.final")["data"]["items"]
    assert "file://share/hr/holidays.txt" in [s["url"] for s in sources]
    fake_llm.wait_closed()
    assert fake_llm.streams_completed == 1


def test_sse_events(client_for: Callable[..., FlaskClient]) -> None:
    events = sse(client_for(), query="How many days of paid annual leave?")
    kinds = [e["type"] for e in events]
    assert kinds[0] == "step" and kinds[-1] == "done"
    sources = next(e for e in events if e["type"] == "step" and e["id"] == "sources")
    assert kinds.index("step") < kinds.index("token") and events.index(sources) < kinds.index("token")
    tokens = "".join(e["content"] for e in events if e["type"] == "token")
    done = events[-1]
    assert tokens == done["final_response"] == ANSWER
    assert done["usage"]["total_tokens"] == 18
    assert sources["references"] and done["references"] == []  # sent, but the answer cites none of them


def test_the_final_text_equals_ai_rag(client_for: Callable[..., FlaskClient]) -> None:
    client = client_for()
    body = {"query": "VPN client", "format": "bulletpoint"}
    rag = client.post(f"{API}/ai/rag", json=body).get_json()["content"]
    streamed = ndjson(client, **body)
    assert next(e for e in streamed if e["type"] == "message.final")["data"]["text"] == rag["message"]
    assert next(e for e in streamed if e["type"] == "sources.final")["data"]["items"] == rag["documents"]


def test_only_the_final_call_is_streamed_and_phases_come_first(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm, solr: SolrClient, settings: Settings
) -> None:
    big = "\n\n".join(f"Paid leave rule {i}: " + "employees may carry over unused days. " * 20 for i in range(6))
    doc = {"id": "stream-big", "title": "Leave rules", "url": "stream-big", "exactContent": big}
    solr.post(f"{settings.collection_main}/update", json=[doc], params={"commit": "true"})
    events = ndjson(client_for(max_request_size=2500, chunk_size=900), query="leave rules", id="stream-big")
    phases = [e["data"]["name"] for e in events if e["type"] == "phase"]
    assert phases.count("rag:refine") >= 2 and phases[-1] == "rag:response generation"
    assert len(fake_llm.prompts()) == phases.count("rag:refine") + 1
    fake_llm.wait_closed()
    assert fake_llm.streams_completed == 1  # the intermediate calls were not streamed


def test_error_before_streaming_still_sends_sources(client_for: Callable[..., FlaskClient]) -> None:
    events = ndjson(client_for(), query="salary", id="no-such-document")
    types = [e["type"] for e in events]
    assert types == ["stream.started", "phase", "sources.final", "error", "stream.completed"]
    assert events[2]["data"] == {"items": []}
    error = events[3]["data"]
    assert error["label"] == "ragFileNotFound" and error["code"] == "428" and error["message"]  # a string, as 7.0
    assert events[-1]["data"] == {"status": "ERROR"}


def test_error_mid_stream_keeps_the_partial_answer(client_for: Callable[..., FlaskClient], fake_llm: FakeLlm) -> None:
    client = client_for(llm_max_retries=0)
    fake_llm.reset(lambda prompt: ANSWER, fail_after=3)
    events = ndjson(client, query="paid leave")
    error = next(e for e in events if e["type"] == "error")["data"]
    assert error["label"] == "ragTechnicalError"
    assert error["partial"] == "Employees get twenty"  # what was shown (blank space is held back)
    assert events[-1] == {**events[-1], "type": "stream.completed", "data": {"status": "ERROR"}}
    assert error["details"] == {"phase": "rag:response generation", "sources_sent": True}
    assert set(error["usage"]) >= {"prompt_tokens", "completion_tokens", "total_tokens"}


def test_an_error_the_llm_answers_with_http_200_is_a_technical_error_streamed_or_not(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    """An LLM that answers HTTP 200 with an error document (vLLM's ``{"object": "error"}``) failed:
    ai/stream says so as ai/rag does (ragTechnicalError), never "no valid answer"."""
    client = client_for(llm_max_retries=0)
    fake_llm.reset(lambda p: {"object_error": "The model is not loaded."})  # type: ignore[arg-type,return-value]
    events = ndjson(client, query="paid leave")
    error = next(e for e in events if e["type"] == "error")["data"]
    assert error["label"] == "ragTechnicalError" and events[-1]["data"] == {"status": "ERROR"}
    answered = client.post(f"{API}/ai/rag", json={"query": "paid leave"})
    assert answered.get_json()["content"]["error"]["label"] == "ragTechnicalError"


def test_an_sse_error_carries_the_partial_response_usage_and_details(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    """chat-core's error event: the partial response, the tokens used before the failure (a
    rewriting call's here) and where the answer was when it failed."""
    client = client_for(llm_max_retries=0, rewriting_bm25=True)
    fake_llm.reset(lambda p: "paid leave days" if p.startswith("Task: rewrite") else ANSWER, fail_after=3)
    events = sse(client, query="How many days of paid leave?")
    error = next(e for e in events if e["type"] == "error")
    assert error["label"] == "ragTechnicalError" and error["partial_response"] == "Employees get twenty"
    assert error["usage"]["total_tokens"] > 0  # the rewriting call's tokens, counted before the failure
    assert error["details"]["phase"] == "rag:response generation"


@pytest.mark.parametrize("body", [{"query": ""}, {"q": "x", "action": "summarize", "id": "a"}, {"query": "x", "z": 1}])
def test_a_bad_stream_request_is_answered_in_ndjson(client_for: Callable[..., FlaskClient], body: Any) -> None:
    events = ndjson(client_for(), **body)
    assert [e["type"] for e in events] == ["stream.started", "error", "stream.completed"]
    error = events[1]["data"]
    assert error["label"] == "aiBadRequest" and error["code"] == "400" and error["reason"] and error["message"]
    assert events[2]["data"] == {"status": "ERROR"}
    # chat-core SSE clients keep Datafari's error JSON
    refused = client_for().post(f"{API}/ai/stream", json=body, headers={"Accept": "text/event-stream"})
    assert refused.get_json()["content"]["error"]["label"] == "ragBadRequest"


def test_7_0_body_sources_added_one_by_one_then_final(client_for: Callable[..., FlaskClient]) -> None:
    history = [{"role": "user", "message": "Hello"}]
    events = ndjson(client_for(), q="paid leave", history=history, filters={"extension": ["txt"]})
    types = [e["type"] for e in events]
    added = [e["data"] for e in events if e["type"] == "sources.add"]
    final = next(e["data"]["items"] for e in events if e["type"] == "sources.final")
    assert added == final and added and types.index("sources.final") == types.index("sources.add") + len(added)
    assert types[-1] == "stream.completed" and events[-1]["data"] == {"status": "OK"}


def test_a_client_that_leaves_cancels_the_llm_request(app_settings: Settings, fake_llm: FakeLlm) -> None:
    fake_llm.reset(lambda prompt: "word " * 200, chunk_delay=0.05)
    with serve(create_app(app_settings)) as base:
        response = requests.post(f"{base}{API}/ai/stream", json={"query": "paid leave"}, stream=True, timeout=30)
        for line in response.iter_lines():
            if json.loads(line)["type"] == "message.delta":
                break
        response.close()
        fake_llm.wait_closed()
    assert fake_llm.streams_cut == 1 and fake_llm.streams_completed == 0


def test_fifty_slow_streams_do_not_starve_other_requests(app_settings: Settings, fake_llm: FakeLlm) -> None:
    """Production server settings (gunicorn, conf/gunicorn.conf.py): 50 streams of ~2 s each, and
    plain requests made meanwhile are answered while the streams are still running."""
    fake_llm.reset(lambda prompt: "slow " * 20, chunk_delay=0.1)
    with served_sidecar(app_settings, free_port()) as base:
        started = threading.Barrier(51)
        ends: list[float] = []

        def stream() -> str:
            started.wait()
            with requests.post(
                f"{base}{API}/ai/stream", json={"query": "paid leave"}, stream=True, timeout=60
            ) as response:
                lines = [json.loads(x) for x in response.iter_lines() if x]
            ends.append(time.monotonic())
            return lines[-1]["data"]["status"]

        with ThreadPoolExecutor(max_workers=50) as pool:
            futures = [pool.submit(stream) for _ in range(50)]
            started.wait()
            time.sleep(0.5)  # the streams are open and generating
            health = requests.get(f"{base}/health", timeout=30)
            plain = requests.get(f"{base}{API}/search/select", params={"q": "password"}, timeout=30)
            answered = time.monotonic()
            statuses = [f.result() for f in futures]
    assert statuses == ["OK"] * 50
    assert health.status_code == 200 and plain.json()["response"]["docs"]
    assert answered < min(ends)  # answered while every stream was still open


def test_sse_steps_carry_chat_cores_stage_ids_and_debug_when_enabled(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    fake_llm.reset(lambda prompt: "paid annual leave" if prompt.startswith("Task: rewrite") else ANSWER)
    events = sse(client_for(rewriting_bm25=True, cache_enabled=True), query="How many days off?")
    steps = [e["id"] for e in events if e["type"] == "step"]
    assert steps == ["rewriting", "search", "cache", "sources", "generation"]  # the cache step tells its hits
    done = events[-1]
    assert done["type"] == "done" and done["latency_ms"] >= 0 and done["final_response"] == ANSWER
    assert not any(e["type"] == "debug" for e in events)  # off by default
    debug = sse(client_for(rewriting_bm25=True, stream_debug=True), query="How many days off?")
    notes = [e for e in debug if e["type"] == "debug"]
    [rewritten] = [n for n in notes if n["event"] == "query.rewritten"]
    assert rewritten["data"] == {"query": "paid annual leave"}
    assert all(a["elapsed_ms"] <= b["elapsed_ms"] for a, b in itertools.pairwise(notes))
    assert [e["id"] for e in debug if e["type"] == "step"] == ["rewriting", "search", "sources", "generation"]


def test_a_sidecar_stopped_mid_stream_ends_the_answer_and_records_its_turn(
    app_settings: Settings, fake_llm: FakeLlm, tmp_path: Path
) -> None:
    """A sidecar told to stop (SIGTERM to gunicorn's master, as a deployment or `datafari-rag run`
    stops it) while an answer streams: the answer streams to its last token and `stream.completed`,
    its turn is in the conversation, and the server then exits by itself. The stream lasts 15 s:
    longer than the 10 s grace gunicorn used to give, which cut it with no last event and no turn."""
    answer = " ".join(f"part{i}" for i in range(30))
    fake_llm.reset(lambda prompt: answer, chunk_delay=0.5)
    mine = trusted_users(app_settings, tmp_path, {"alice": []}).replace(
        store_url=f"sqlite:///{tmp_path / 'store.db'}", chat_memory_enabled=True, server_port=free_port()
    )
    alice = {"X-Remote-User": "alice"}
    base = f"http://127.0.0.1:{mine.server_port}"
    log = tmp_path / "sidecar.log"
    with served_process(["datafari_rag.cli", "serve"], f"{base}/health", settings_env(mine), log) as server:
        created = requests.post(f"{base}{API}/conversations", json={"title": "Stopped"}, headers=alice, timeout=30)
        cid = created.json()["content"]["conversation"]["id"]
        events: list[dict[str, Any]] = []
        stopped = False
        with requests.post(
            f"{base}{API}/ai/stream",
            json={"query": "How many days of paid annual leave?", "conversationId": cid},
            headers=alice,
            stream=True,
            timeout=120,
        ) as response:
            for line in response.iter_lines():
                events.append(json.loads(line))
                if events[-1]["type"] == "message.delta" and not stopped:
                    server.send_signal(signal.SIGTERM)  # the first words are out: stop the sidecar
                    stopped = True
        assert server.wait(timeout=120) == 0  # it ended by itself, once the answer was given
    assert events[-1]["type"] == "stream.completed" and events[-1]["data"] == {"status": "OK"}, events[-3:]
    assert "".join(e["data"]["text"] for e in events if e["type"] == "message.delta") == answer
    store = ConversationStore(open_engine(mine.store_url))
    [turn] = store.get("alice", cid)["blocks"]
    store.close()
    assert turn["status"] == "done" and turn["answer"] == answer
