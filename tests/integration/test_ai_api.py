"""Datafari 7.0's ``POST ai`` on the real Solr with a recording fake LLM: actions, ``q``, 7.0's
history and filters, its response and error shapes (codes as strings)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.registry import RETRIEVAL_MODES
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.fake_llm import FakeLlm
from tests.integration.conftest import mapped_users

API = "/Datafari/rest/v2.0"
DOCS = [
    ("ai-1", "pdf", "The cooling pump of line one is inspected every Monday by the day shift."),
    ("ai-2", "docx", "The cooling pump of line two is inspected every Friday by the night shift."),
    ("ai-3", "pdf", "The cooling pump of line three is replaced every ten years."),
    ("ai-4", "pdf", "The cooling pump budget of line four is confidential: 40000 euros."),
]


@pytest.fixture(scope="module")
def ai_settings(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    folder = tmp_path_factory.mktemp("ai")
    mine = mapped_users(settings, folder, "ai", {"hana": ["team-hr"]})
    bootstrap(solr, mine)
    docs = [
        {"id": i, "title": f"Pump note {i}", "url": f"file://notes/{i}.{ext}", "extension": ext, "exactContent": text}
        for i, ext, text in DOCS
    ]
    docs[3]["allow_token_document"] = ["team-hr"]
    assert all(r.status == "ok" for r in Indexer.of(solr, mine).add(docs, commit=True))
    return mine


@pytest.fixture
def ai(
    ai_settings: Settings, fake_llm_server: tuple[FakeLlm, str], fake_llm: FakeLlm
) -> Callable[..., tuple[int, dict[str, Any]]]:
    def post(body: Any, method: str = "bm25", user: str | None = None) -> tuple[int, dict[str, Any]]:
        mine = ai_settings.replace(llm_endpoint=fake_llm_server[1], retrieval_method=method, chat_memory_enabled=True)
        app = create_app(mine)
        headers = {"X-Remote-User": user} if user else {}
        response = app.test_client().post(f"{API}/ai", json=body, headers=headers)
        return response.status_code, response.get_json()

    return post


def source_ids(body: dict[str, Any]) -> set[str]:
    return {s["id"] for s in body["content"]["sources"]}


def test_rag_with_q_and_7_0_history(ai: Callable[..., Any], fake_llm: FakeLlm) -> None:
    history = [{"role": "user", "message": "Which pumps?"}, {"role": "assistant", "message": "The cooling pumps."}]
    status, body = ai({"q": "When is the cooling pump inspected?", "history": history, "memoryId": "m-1"})
    assert status == 200 and body["status"] == "OK", body
    content = body["content"]
    assert content["message"] == "A fake answer." and content["memoryId"] == "m-1"
    assert source_ids(body) <= {"ai-1", "ai-2", "ai-3"} and source_ids(body)
    assert all(set(s) == {"id", "title", "url", "content"} and len(s["content"]) <= 200 for s in content["sources"])
    assert any("The cooling pumps." in p for p in fake_llm.prompts())  # 7.0's history reached the LLM (chat memory)


@pytest.mark.parametrize("method", RETRIEVAL_MODES.names)
def test_filters_restrict_the_sources_and_never_widen_them(ai: Callable[..., Any], method: str) -> None:
    question = "When is the cooling pump inspected?"
    status, body = ai({"query": question, "filters": {"id": ["ai-2"]}}, method)
    assert status == 200 and body["status"] == "OK" and source_ids(body) == {"ai-2"}, body
    status, body = ai({"query": question, "filters": {"extension": ["pdf"]}}, method)
    assert body["status"] == "OK" and source_ids(body) and source_ids(body) <= {"ai-1", "ai-3"}
    # ai-4 is team-hr's: a filter naming it finds nothing for anyone else, and something for hana
    status, body = ai({"query": "cooling pump budget", "filters": {"id": ["ai-4"]}}, method)
    assert body["status"] == "ERROR" and body["content"]["error"]["label"] == "ragNoFileFound"
    assert body["content"]["error"]["code"] == "428" and "40000" not in str(body)
    status, body = ai({"query": "cooling pump budget", "filters": {"id": ["ai-4"]}}, method, user="hana")
    assert body["status"] == "OK" and source_ids(body) == {"ai-4"}


def test_summarize_search_and_agentic(ai: Callable[..., Any]) -> None:
    status, body = ai({"action": "summarize", "id": "ai-1"})
    assert status == 200 and body["status"] == "OK" and body["content"]["message"] == "A fake answer."
    status, body = ai({"action": "summarize", "id": "ai-4"})  # not readable: as if it did not exist
    assert body["status"] == "ERROR" and body["content"]["error"]["label"] == "summarizationNoFileFound"
    status, body = ai({"action": "search", "query": "cooling pump inspected", "filters": {"extension": ["pdf"]}})
    assert status == 200 and body["status"] == "OK"
    assert {d["id"] for d in body["content"]["docs"]} == {"ai-1", "ai-3"}
    status, body = ai({"action": "agentic", "query": "pumps"})  # the fake LLM calls no tool: answers at once
    assert status == 200 and body["status"] == "OK" and body["content"]["message"] == "A fake answer."


@pytest.mark.parametrize(
    "request_body",
    [
        {"action": "rag"},
        {"action": "dance", "query": "x"},
        {"query": "x", "q": "y"},
        {"query": "x", "unknown": 1},
        {"query": "x", "filters": {"title": ["a"]}},
        {"query": "x", "filters": {"id": "ai-1"}},
        {"query": "x", "filters": {"id": []}},
        {"query": "x", "filters": {"id": ["a\u0000b"]}},
        {"query": "x", "history": [{"role": "user", "message": "a", "content": "b"}]},
        {"query": "x", "history": [{"role": "robot", "message": "a"}]},
        {"query": "x", "conversationId": 7},
        {"action": "summarize"},
        [1, 2],
    ],
)
def test_requests_7_0_refuses_are_400_with_ai_labels(ai: Callable[..., Any], request_body: Any) -> None:
    status, body = ai(request_body)
    assert status == 400 and body["status"] == "ERROR", body
    error = body["content"]["error"]
    assert error["code"] == "400" and error["label"] == "aiBadRequest" and error["reason"] and error["message"]
    assert body["content"]["sources"] == []


def test_the_nothing_found_sentence_follows_lang(ai: Callable[..., Any]) -> None:
    question = {"query": "cooling pump budget", "filters": {"id": ["ai-4"]}}
    status, body = ai({**question, "lang": "fr"})
    error = body["content"]["error"]
    assert status == 200 and body["status"] == "ERROR"
    assert error["label"] == "ragNoFileFound" and error["code"] == "428"
    assert error["message"] == "Désolé, je n'ai trouvé aucun document pertinent pour répondre à votre demande."
    _, body = ai({**question, "lang": "de"})  # no German sentence yet: Datafari's English one
    assert body["content"]["error"]["message"].startswith("Sorry, I couldn't find any relevant document")
