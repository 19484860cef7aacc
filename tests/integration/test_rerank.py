"""Reranking on the real Solr: the backends reorder what the user's retrieval found, never more."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, jsonify, request
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.overlap_cross_encoder import write_overlap_cross_encoder
from datafari_rag.testing.servers import serve
from tests.integration.conftest import board_world

API = "/Datafari/rest/v2.0"
VAULT = "file://share/secret/vault.txt"
VAULT_TEXT = "Board vault: reset password codes and VPN keys for connecting from home."
QUESTION = "How do I reset my password and connect to the VPN from home?"


@pytest.fixture(scope="module")
def rerank_settings(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    folder = tmp_path_factory.mktemp("rerank")
    vault = {"id": VAULT, "title": "Vault", "exactContent": VAULT_TEXT}
    base = board_world(solr, settings, folder, "rerank", vault).replace(
        retrieval_method="rrf", solr_top_k=3, rerank_top_n=8
    )
    return base.replace(rerank_onnx_path=str(write_overlap_cross_encoder(folder / "cross-encoder")))


class RerankServer:
    """A Cohere-compatible /rerank endpoint that records what it is sent."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.answer: Callable[[dict[str, Any]], Any] = lambda body: reversed_scores(body)
        self.delay = 0.0

    def app(self) -> Flask:
        app = Flask(__name__)

        @app.post("/v1/rerank")
        def rerank() -> Any:
            body = request.get_json()
            self.bodies.append(body)
            time.sleep(self.delay)
            return self.answer(body)

        return app


def reversed_scores(body: dict[str, Any]) -> Any:
    """The last passage first: an order retrieval would never give."""
    n = len(body["documents"])
    return jsonify({"results": [{"index": i, "relevance_score": float(i)} for i in range(n)]})


@pytest.fixture(scope="module")
def rerank_server() -> Iterator[tuple[RerankServer, str]]:
    server = RerankServer()
    with serve(server.app()) as url:
        yield server, f"{url}/v1/rerank"


@pytest.fixture
def client_for(
    rerank_settings: Settings, fake_llm_server: tuple[FakeLlm, str], fake_llm: FakeLlm
) -> Callable[..., FlaskClient]:
    return lambda **o: create_app(rerank_settings.replace(llm_endpoint=fake_llm_server[1], **o)).test_client()


def ask(client: FlaskClient, user: str = "otto", query: str = QUESTION) -> dict[str, Any]:
    response = client.post(f"{API}/ai/rag", json={"query": query}, headers={"X-Remote-User": user})
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()["content"]


def urls(content: dict[str, Any]) -> list[str]:
    return [d["url"] for d in content["documents"]]


def stream_phases(client: FlaskClient, user: str = "otto") -> list[dict[str, Any]]:
    body = client.post(f"{API}/ai/stream", json={"query": QUESTION}, headers={"X-Remote-User": user})
    events = [json.loads(line) for line in body.get_data(as_text=True).splitlines()]
    return [e["data"] for e in events if e["type"] == "phase"]


def test_the_rerank_api_gets_top_n_passages_and_orders_the_sources(
    client_for: Callable[..., FlaskClient], rerank_server: tuple[RerankServer, str]
) -> None:
    server, url = rerank_server
    server.bodies.clear()
    plain = ask(client_for())
    deep = ask(client_for(solr_top_k=8))  # what retrieval finds rerank.topN deep, in its order
    reranked = ask(client_for(rerank_enabled=True, rerank_api_url=url, rerank_api_model="m1"))
    [body] = server.bodies
    assert body["query"] == QUESTION and body["model"] == "m1" and 3 < len(body["documents"]) <= 8
    # reversed scores: the sources are the deep list's last passages, last first, cut to solr.topK
    assert len(reranked["documents"]) <= 3 and urls(reranked) != urls(plain)
    assert set(urls(reranked)) <= set(urls(deep))
    assert urls(reranked)[0] == _last_document(deep, body)


def _last_document(deep: dict[str, Any], body: dict[str, Any]) -> str:
    """The url of the document whose chunk was the last passage sent to the reranker."""
    last = " ".join(body["documents"][-1].split())
    matches = [d["url"] for d in deep["documents"] if " ".join(d["content"].split())[:40] in last]
    return matches[0] if matches else VAULT  # (a chunk of a document not in the top 8 sources)


def test_the_onnx_cross_encoder_puts_the_most_overlapping_passage_first(
    client_for: Callable[..., FlaskClient],
) -> None:
    out = ask(client_for(rerank_enabled=True, rerank_backend="onnx"))
    # the overlap model counts question words in each passage: the VPN and password guides win
    top = [d["title"] for d in out["documents"]]
    assert top[0] in ("Connecting to the corporate VPN", "How to reset your password"), top
    assert {"Connecting to the corporate VPN", "How to reset your password"} <= set(top)


def test_a_failing_or_slow_reranker_keeps_the_retrieval_order(
    client_for: Callable[..., FlaskClient], rerank_server: tuple[RerankServer, str]
) -> None:
    server, url = rerank_server
    plain = urls(ask(client_for()))
    try:
        server.answer = lambda body: ("overloaded", 503)
        client = client_for(rerank_enabled=True, rerank_api_url=url)
        assert urls(ask(client)) == plain
        [phase] = [p for p in stream_phases(client) if p["name"] == "rag:rerank"]
        assert "503" in phase["skipped"] and phase["backend"] == "api"
        server.answer, server.delay = reversed_scores, 1.5
        slow = client_for(rerank_enabled=True, rerank_api_url=url, rerank_timeout=0.3)
        began = time.monotonic()
        assert urls(ask(slow)) == plain and time.monotonic() - began < 1.4
    finally:
        server.answer, server.delay = reversed_scores, 0.0


def test_the_llm_reranks_listwise(client_for: Callable[..., FlaskClient], fake_llm: FakeLlm) -> None:
    fake_llm.reset(lambda prompt: "[2] > [1]" if "Task: rerank" in prompt else "An answer [1].")
    out = ask(client_for(rerank_enabled=True, rerank_backend="llm"))
    rank_call, _answer_call = fake_llm.messages()
    passages = rank_call[-1]["content"]
    assert "Query: " + QUESTION in passages and passages.startswith("[1] ") and "\n[8] " in passages
    second = passages.split("\n[2] ", 1)[1].split("\n", 1)[0]
    assert " ".join(out["documents"][0]["content"].split())[:30] in second  # passage 2 came first
    assert out["message"] == "An answer [1]."


def test_reranking_never_reaches_a_document_the_user_cannot_read(
    client_for: Callable[..., FlaskClient], rerank_server: tuple[RerankServer, str]
) -> None:
    """The reranker sees only the user's passages: the vault is sent for bea (board), never for
    otto, however high the reranker scores it."""
    server, url = rerank_server
    client = client_for(rerank_enabled=True, rerank_api_url=url)
    server.bodies.clear()
    server.answer = loves_the_vault
    try:
        otto, bea = ask(client, "otto"), ask(client, "bea")
    finally:
        server.answer = reversed_scores
    sent_for_otto, sent_for_bea = (" ".join(b["documents"]) for b in server.bodies)
    assert "Board vault" not in sent_for_otto and VAULT not in urls(otto)
    assert "Board vault" in sent_for_bea and urls(bea)[0] == VAULT


def loves_the_vault(body: dict[str, Any]) -> Any:
    scores = [100.0 if "vault" in d.lower() else 0.0 for d in body["documents"]]
    return jsonify({"results": [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]})


def test_a_reranker_that_cannot_start_is_reported_at_start(rerank_settings: Settings, tmp_path: Path) -> None:
    from datafari_rag.config import ConfigError

    with pytest.raises(ConfigError, match=r"rerank\.api\.url"):
        create_app(rerank_settings.replace(rerank_enabled=True))
    with pytest.raises(ConfigError, match=r"rerank\.onnx\.path"):
        create_app(rerank_settings.replace(rerank_enabled=True, rerank_backend="onnx", rerank_onnx_path=str(tmp_path)))
