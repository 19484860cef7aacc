"""A whole answer, streamed and not, from Anthropic's and Google's APIs (local recording stubs,
called through the vendors' SDKs) on the real Solr: the documents reach the vendor's prompt, the
answer and its usage come back in Datafari's JSON and chat-core's SSE."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.sample import index_sample
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import BootstrapReport
from datafari_rag.testing.servers import serve
from datafari_rag.testing.vendor_stubs import AnthropicStub, GeminiStub

API = "/Datafari/rest/v2.0"
QUESTION = "How many days of paid annual leave?"


@pytest.fixture(scope="module")
def corpus(solr: SolrClient, settings: Settings, bootstrapped: BootstrapReport) -> None:
    index_sample(Indexer.of(solr, settings))


@pytest.fixture(params=["anthropic", "gemini"])
def vendor(request: pytest.FixtureRequest, settings: Settings, corpus: None) -> Iterator[tuple[Any, Settings]]:
    stub = AnthropicStub() if request.param == "anthropic" else GeminiStub()
    stub.answer = lambda body: "Employees get 25 days [1].\nSOURCES_USED: 1"
    with serve(stub.app()) as url:
        yield stub, settings.replace(llm_service=request.param, llm_endpoint=url, llm_model=f"{request.param}-test")


def prompt_of(body: dict[str, Any]) -> str:
    if "messages" in body:
        return json.dumps([body.get("system"), body["messages"]])
    return json.dumps([body.get("systemInstruction"), body["contents"]])


def test_an_answer_and_a_stream_from_the_vendor(vendor: tuple[Any, Settings]) -> None:
    stub, mine = vendor
    client = create_app(mine).test_client()
    out = client.post(f"{API}/ai/rag", json={"query": QUESTION}).get_json()
    assert out["status"] == "OK", out
    content = out["content"]
    assert content["message"] == "Employees get 25 days [1]." and [r["number"] for r in content["references"]] == [1]
    assert content["usage"]["estimated"] is False and content["usage"]["completion_tokens"] > 0
    assert "25 days of paid annual leave" in prompt_of(stub.requests[-1])  # the documents were sent
    response = client.post(f"{API}/ai/stream", json={"query": QUESTION}, headers={"Accept": "text/event-stream"})
    text = response.get_data(as_text=True)
    events = [json.loads(b[len("data: ") :]) for b in text.split("\n\n") if b.startswith("data: ")]
    tokens = [e["content"] for e in events if e["type"] == "token"]
    assert len(tokens) > 1 and "".join(tokens) == events[-1]["final_response"] == "Employees get 25 days [1]."
    assert events[-1]["usage"]["estimated"] is False


def test_a_vendor_that_fails_is_a_technical_error_without_its_words(vendor: tuple[Any, Settings]) -> None:
    stub, mine = vendor
    stub.fail = [400]
    out = create_app(mine.replace(llm_max_retries=0)).test_client().post(f"{API}/ai/rag", json={"query": QUESTION})
    body = out.get_json()
    assert body["content"]["error"]["label"] == "ragTechnicalError" and "stub 400" not in json.dumps(body)
