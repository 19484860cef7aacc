"""Query enhancement on the real Solr, with a recording fake LLM: multi-query, HyDE and
self-querying change what is searched, never what the user may read."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.sample import read_corpus
from datafari_rag.solr import SolrClient
from datafari_rag.testing.fake_llm import FakeLlm
from tests.integration.conftest import board_world

API = "/Datafari/rest/v2.0"
HOLIDAYS = "file://share/hr/holidays.txt"
MEMO = "file://share/board/memo.txt"


@pytest.fixture(scope="module")
def qe_settings(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    memo = {
        "id": MEMO,
        "title": "Board memo",
        "author": "Zed Secretary",
        "exactContent": "The board memo on leave: executives get extra days of leave.",
    }
    mine = board_world(solr, settings, tmp_path_factory.mktemp("enhancement"), "enhance", memo)
    return mine.replace(retrieval_method="vector", solr_top_k=3)


@pytest.fixture
def client_for(qe_settings: Settings, fake_llm_server: tuple[FakeLlm, str]) -> Callable[..., FlaskClient]:
    return lambda **o: create_app(qe_settings.replace(llm_endpoint=fake_llm_server[1], **o)).test_client()


def by_task(**replies: str) -> Callable[[str], str]:
    """The fake LLM's reply for each task of the prompt (``Task: multiquery``…), else an answer."""

    def answer(prompt: str) -> str:
        for task, reply in replies.items():
            if f"Task: {task}" in prompt:
                return reply
        return "An answer [1]."

    return answer


def ask(client: FlaskClient, query: str, user: str = "otto") -> dict[str, Any]:
    response = client.post(f"{API}/ai/rag", json={"query": query}, headers={"X-Remote-User": user})
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()["content"]


def urls(content: dict[str, Any]) -> list[str]:
    return [d["url"] for d in content["documents"]]


def test_multi_query_searches_each_wording_and_fuses_them(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    question = "Photosynthesis in plants"
    fake_llm.reset(by_task(multiquery=json.dumps({"queries": ["paid annual leave days", "holiday entitlement"]})))
    plain = ask(client_for(), question)
    assert HOLIDAYS not in urls(plain)
    fake_llm.reset(by_task(multiquery=json.dumps({"queries": ["paid annual leave days", "holiday entitlement"]})))
    out = ask(client_for(query_multi_query=2, solr_top_k=4), question)
    assert HOLIDAYS in urls(out) and any("photosynth" in u for u in urls(out))
    [expand] = [p for p in fake_llm.prompts() if "Task: multiquery" in p]
    assert "Write 2 different wordings" in expand and "Question: Photosynthesis in plants" in expand
    # the score filter: a passage must be found by 2 of the 3 queries; only leave documents are
    fake_llm.reset(by_task(multiquery=json.dumps({"queries": ["paid annual leave days", "annual leave policy"]})))
    voted = ask(client_for(query_multi_query=2, query_multi_query_min_votes=2, solr_top_k=4), question)
    assert HOLIDAYS in urls(voted) and not any("photosynth" in u for u in urls(voted))


def test_hyde_searches_with_the_passage_the_llm_wrote(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    passage = "Every employee is entitled to 25 days of paid annual leave per calendar year."
    fake_llm.reset(by_task(hyde=passage))
    out = ask(client_for(query_hyde=True, solr_top_k=1), "What do I get?")
    assert urls(out) == [HOLIDAYS]
    [answer] = [m for m in fake_llm.messages() if "Task: hyde" not in m[0]["content"]]
    assert "Question: What do I get?" in answer[-1]["content"]  # the LLM still answers the question


def test_self_querying_filters_on_values_the_user_can_see(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    reply = {"query": "congés", "filters": {"language": ["FR"], "author": ["Zed Secretary"]}}
    fake_llm.reset(by_task(selfquery=json.dumps(reply)))
    client = client_for(query_self_query_fields="language,author,last_modified", solr_top_k=3)
    out = ask(client, "Les documents en français sur les congés")
    [prompt] = [p for p in fake_llm.prompts() if "Task: selfquery" in p]
    assert "language (values: en, fr)" in prompt and "Zed Secretary" not in prompt  # otto's documents only
    french = {d["url"] for d in read_corpus() if d["language"] == "fr"}
    assert out["documents"] and set(urls(out)) <= french, urls(out)
    fake_llm.reset(by_task(selfquery=json.dumps(reply)))
    ask(client, "Les documents en français sur les congés", user="bea")
    [prompt] = [p for p in fake_llm.prompts() if "Task: selfquery" in p]
    assert "Zed Secretary" in prompt  # bea may read the memo: its author is a value she can use


def test_self_querying_never_passes_raw_syntax_and_falls_back_when_it_finds_nothing(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    client = client_for(query_self_query_fields="language,last_modified")
    plain = ask(client_for(), "annual leave")
    hostile = {"query": "annual leave", "filters": {"language": ["*:* OR id:*"], "allow_token_document": ["board"]}}
    fake_llm.reset(by_task(selfquery=json.dumps(hostile)))
    assert urls(ask(client, "annual leave")) == urls(plain)  # nothing usable: searched as asked
    french_only = {"query": "annual leave", "filters": {"language": ["fr"]}}
    fake_llm.reset(by_task(selfquery=json.dumps(french_only)))
    body = {"q": "annual leave", "filters": {"id": [HOLIDAYS]}}  # 7.0: the request allows one English document
    response = client.post(f"{API}/ai", json=body, headers={"X-Remote-User": "otto"}).get_json()
    assert response["status"] == "OK", response
    # French ∩ {holidays} is empty: the search runs without the guess, within the request's filters
    assert [x["id"] for x in response["content"]["sources"]] == [HOLIDAYS]
    dated = {"query": "policy", "dates": {"last_modified": {"from": "2026-03-01", "to": "2026-12-31"}}}
    fake_llm.reset(by_task(selfquery=json.dumps(dated)))
    out = ask(client_for(query_self_query_fields="last_modified", solr_top_k=10), "policies since March 2026")
    assert out["documents"] and HOLIDAYS not in urls(out)  # modified 2026-01-10


def test_the_stream_reports_what_enhancement_did(client_for: Callable[..., FlaskClient], fake_llm: FakeLlm) -> None:
    fake_llm.reset(by_task(multiquery='{"queries": ["annual leave"]}', hyde="Leave is 25 days."))
    client = client_for(query_multi_query=1, query_hyde=True)
    body = client.post(f"{API}/ai/stream", json={"query": "days off?"}, headers={"X-Remote-User": "otto"})
    events = [json.loads(line) for line in body.get_data(as_text=True).splitlines()]
    [phase] = [e["data"] for e in events if e["type"] == "phase" and e["data"]["name"] == "rag:query enhancement"]
    assert phase == {"name": "rag:query enhancement", "variants": 1, "hyde": True}
