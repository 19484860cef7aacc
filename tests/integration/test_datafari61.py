"""A Datafari 6.1 deployment upgrades without editing its files: 6.1's own "For OpenAI"
rag.properties (a full chat/completions URL, ``rag.hl.fragsize=0``, ``rag.addInstructions``,
``rag.maxJsonLength``, ``rag.enable.logs``) loads as written and answers, against the real Solr
and the recording LLM stub; 6.1's request layout (one user message per document, then the
question) is one setting away."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import urllib3
from flask import Flask, request
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings, load_settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.sample import index_sample
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import BootstrapReport
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import free_port, serve, served_sidecar

API = "/Datafari/rest/v2.0"
QUESTION = "How many days of paid annual leave?"
LONG_ID = "file://share/hr/leave-booking.txt"  # far longer than any passage the highlighter cuts

# Datafari 6.1's documented example for OpenAI, key for key (only the URL's host is the stub's)
FOR_OPENAI = """\
##############################################
###            For OpenAI                  ###
##############################################
rag.enabled=true
rag.api.endpoint={endpoint}
rag.api.token=sk-your-openai-key
rag.model=gpt-3.5-turbo
rag.template=openai
rag.temperature=0.2
rag.maxTokens=200
rag.maxFiles=3
rag.addInstructions=true
rag.solrField=highlighting
rag.hl.fragsize=0
rag.operator=OR
rag.enable.logs=true
rag.maxJsonLength=15000
rag.chunk.size=30000
"""


@pytest.fixture(scope="module")
def corpus(solr: SolrClient, settings: Settings, bootstrapped: BootstrapReport) -> None:
    index_sample(Indexer.of(solr, settings))
    long = " ".join(f"Rule {i}: paid annual leave is booked {i} weeks ahead in the leave tool." for i in range(40))
    doc = {"id": LONG_ID, "title": "Leave booking rules", "url": LONG_ID, "exactContent": long}
    solr.post(f"{settings.collection_main}/update", json=[doc], params={"commit": "true"})


def upgraded(settings: Settings, folder: Path, endpoint: str, extra: str = "") -> Settings:
    """The test deployment with what 6.1's file sets (every key it changes from the defaults)."""
    file = folder / "rag.properties"
    file.write_text(FOR_OPENAI.format(endpoint=endpoint) + extra)
    loaded, defaults = load_settings(file, env={}), Settings()
    changed = {
        f.name: getattr(loaded, f.name)
        for f in dataclasses.fields(Settings)
        if getattr(loaded, f.name) != getattr(defaults, f.name)
    }
    return settings.replace(**changed)


def ask(client: FlaskClient, query: str = QUESTION) -> dict[str, Any]:
    response = client.post(f"{API}/ai/rag", json={"query": query})
    assert response.status_code == 200
    return response.get_json()


def test_the_61_openai_file_loads_unedited_and_answers(
    solr: SolrClient,
    settings: Settings,
    corpus: None,
    fake_llm_server: tuple[FakeLlm, str],
    fake_llm: FakeLlm,
    tmp_path: Path,
) -> None:
    mine = upgraded(settings, tmp_path, f"{fake_llm_server[1]}/chat/completions")
    assert mine.llm_endpoint.endswith("/v1/chat/completions") and mine.llm_url == fake_llm_server[1]
    assert (mine.rag_hl_fragsize, mine.rag_solr_field, mine.max_request_size) == (0, "highlighting", 15000)
    assert (mine.llm_model, mine.llm_temperature, mine.max_files, mine.chunk_size) == ("gpt-3.5-turbo", 0.2, 3, 30000)
    out = ask(create_app(mine).test_client())
    assert out["status"] == "OK", out
    assert len(fake_llm.messages()) == 1  # the stub answers only under …/v1/chat/completions
    # rag.hl.fragsize=0: each document's passage is its whole text, as Solr stores it
    assert LONG_ID in [d["id"] for d in out["content"]["documents"]]
    for doc in out["content"]["documents"]:
        stored = solr.get(f"{settings.collection_main}/get", {"id": doc["id"], "fl": "exactContent"})["doc"]
        assert " ".join(doc["content"].split()) == " ".join(stored["exactContent"].split()), doc["id"]
    assert sum(len(m["content"]) for m in fake_llm.messages()[-1]) <= 15000  # rag.maxJsonLength


def test_the_61_layout_sends_one_user_message_per_document_then_the_question(
    settings: Settings, corpus: None, fake_llm_server: tuple[FakeLlm, str], fake_llm: FakeLlm, tmp_path: Path
) -> None:
    extra = "prompt.layout=message-per-document\n"
    out = ask(create_app(upgraded(settings, tmp_path, fake_llm_server[1], extra)).test_client())
    assert out["status"] == "OK", out
    messages = fake_llm.messages()[-1]
    documents = out["content"]["documents"]
    assert 1 <= len(documents) <= 3  # rag.maxFiles
    assert [m["role"] for m in messages] == ["system", *["user"] * (len(documents) + 1)]
    assert "Task: answer" in messages[0]["content"]
    for message, doc in zip(messages[1:-1], documents, strict=True):
        assert message["content"].startswith("Here is one of the documents: <document")
        assert doc["title"] in message["content"]
    assert messages[-1]["content"] == f"The user question is: {QUESTION}"


@pytest.mark.parametrize("add", [True, False], ids=["addInstructions", "without"])
def test_rag_add_instructions_opens_the_datafari_services_context_or_not(
    settings: Settings, corpus: None, tmp_path: Path, add: bool
) -> None:
    received: list[dict[str, Any]] = []
    service = Flask("external-llm")

    @service.post("/predict")
    def predict() -> Any:
        received.append(request.get_json())
        return {"output": "Twenty-five days."}

    with serve(service) as url:
        extra = f"rag.template=datafari\nrag.addInstructions={str(add).lower()}\nprompt.layout=message-per-document\n"
        out = ask(create_app(upgraded(settings, tmp_path, f"{url}/predict", extra)).test_client())
    assert out["content"]["message"] == "Twenty-five days.", out
    sent = received[-1]["input"]
    assert sent["question"] == QUESTION and "25 days of paid annual leave" in sent["context"]
    assert ("Task: answer" in sent["context"]) is add
    assert sent["max_tokens"] == 200 and sent["temperature"] == 0.2


def test_rag_turned_off_says_why(
    settings: Settings, corpus: None, fake_llm_server: tuple[FakeLlm, str], tmp_path: Path
) -> None:
    out = ask(create_app(upgraded(settings, tmp_path, fake_llm_server[1], "rag.enabled=false\n")).test_client())
    error = out["content"]["error"]
    assert out["status"] == "ERROR" and error["label"] == "ragErrorNotEnabled", out
    assert "ai.enable.rag" in error["reason"]


def test_rag_enable_logs_logs_each_question_under_datafari_rag_serve(
    settings: Settings, corpus: None, fake_llm_server: tuple[FakeLlm, str], tmp_path: Path
) -> None:
    """Served by gunicorn as in production, the question reaches the log at INFO; without the key,
    it does not."""
    http = urllib3.PoolManager()
    for enabled in (True, False):
        log = tmp_path / f"serve-{enabled}.log"
        mine = upgraded(settings, tmp_path, fake_llm_server[1], f"rag.enable.logs={str(enabled).lower()}\n")
        question = f"{QUESTION} ({enabled})"
        with served_sidecar(mine, free_port(), log) as base:
            got = http.request("POST", f"{base}{API}/ai/rag", json={"query": question})
            assert got.status == 200 and json.loads(got.data)["status"] == "OK", got.data[:300]
        lines = [json.loads(x) for x in log.read_text().splitlines() if x.startswith("{")]
        logged = [x for x in lines if question in x.get("message", "")]
        assert [(x["level"], x["name"]) for x in logged] == ([("INFO", "datafari_rag.questions")] if enabled else [])
