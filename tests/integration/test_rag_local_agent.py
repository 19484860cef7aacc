"""End to end with the local agent as the LLM: what `make run` answers with no API key."""

from __future__ import annotations

from typing import Any

import pytest

from datafari_rag.agent.extractive import NOT_FOUND
from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.sample import index_sample
from datafari_rag.prompts import ABSTENTIONS
from datafari_rag.registry import RETRIEVAL_MODES
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import BootstrapReport, bootstrap

API = "/Datafari/rest/v2.0"


@pytest.fixture(scope="module")
def local(settings: Settings, solr: SolrClient, bootstrapped: BootstrapReport, agent_url: str) -> Any:
    index_sample(Indexer.of(solr, settings))
    return lambda **o: create_app(settings.replace(llm_endpoint=agent_url, **o)).test_client()


@pytest.mark.parametrize("method", RETRIEVAL_MODES.names)
def test_answers_from_the_sample_corpus(local: Any, method: str) -> None:
    out = local(retrieval_method=method).post(f"{API}/ai/rag", json={"query": "How many days of paid annual leave?"})
    body = out.get_json()
    assert body["status"] == "OK"
    assert "25 days" in body["content"]["message"]
    assert any(d["title"] in ("Annual leave policy", "Politique de congés payés") for d in body["content"]["documents"])


def test_answers_in_french(local: Any) -> None:
    body = (
        local(retrieval_method="vector")
        .post(f"{API}/ai/rag", json={"query": "Combien de jours de télétravail par semaine ?", "lang": "fr"})
        .get_json()
    )
    assert "trois jours par semaine" in body["content"]["message"]


def test_abstains_when_the_documents_do_not_answer(local: Any) -> None:
    body = (
        local(retrieval_method="vector").post(f"{API}/ai/rag", json={"query": "Who painted the Mona Lisa?"}).get_json()
    )
    assert body["status"] == "OK" and body["content"]["message"] == NOT_FOUND


@pytest.mark.parametrize(
    "question",
    ["Qui a peint la Joconde ?", "Quelle est la hauteur de la tour Eiffel ?"],
)
def test_a_french_question_the_documents_do_not_answer_is_abstained_on(local: Any, question: str) -> None:
    """The nearest French documents come back from the vector search (the English model finds any
    two French texts somewhat alike), but none of their sentences holds the question's words: the
    answer is the French abstention sentence, with nothing cited."""
    body = local(retrieval_method="vector").post(f"{API}/ai/rag", json={"query": question, "lang": "fr"}).get_json()
    assert body["status"] == "OK" and body["content"]["message"] == ABSTENTIONS["fr"], body["content"]["message"]


def test_summarize_a_sample_document(local: Any) -> None:
    body = local().post(f"{API}/ai/summarize", json={"id": "file://share/it/vpn.txt"}).get_json()
    assert body["status"] == "OK" and "VPN" in body["content"]["message"]


@pytest.mark.parametrize("method", ["bm25", "vector"])
def test_chat_memory_answers_from_the_conversation_when_nothing_is_found(
    settings: Settings, solr: SolrClient, agent_url: str, method: str
) -> None:
    """Datafari's documentation's own example: the user named their dog earlier in the
    conversation; the index knows nothing of it; with chat memory the answer is "Jumpy", from
    the conversation alone, with no document."""
    empty = settings.replace(collection_main="jumpy_FileShare", collection_vector="jumpy_VectorMain")
    bootstrap(solr, empty)
    history = [
        {"role": "user", "content": "I have a dog. My dog's name is Jumpy."},
        {"role": "assistant", "content": "Jumpy is a lovely name for a dog."},
    ]
    question = {"query": "What is my dog's name?", "history": history}
    app = create_app(empty.replace(llm_endpoint=agent_url, retrieval_method=method, chat_memory_enabled=True))
    body = app.test_client().post(f"{API}/ai/rag", json=question).get_json()
    assert body["status"] == "OK", body
    assert "Jumpy" in body["content"]["message"] and body["content"]["documents"] == []
    # without chat memory there is nothing to answer from
    app = create_app(empty.replace(llm_endpoint=agent_url, retrieval_method=method))
    body = app.test_client().post(f"{API}/ai/rag", json=question).get_json()
    assert body["content"]["error"]["label"] == "ragNoFileFound"


def test_the_agentic_mode_with_the_local_agent_searches_then_answers(local: Any) -> None:
    """With no API key, the local agent takes part in the tool loop: it searches with the
    question, then answers from what the search returned, citing it by number."""
    body = {"query": "How many days of paid annual leave?", "search_type": "agentic"}
    out = local().post(f"{API}/ai/rag", json=body).get_json()
    assert out["status"] == "OK" and "25 days" in out["content"]["message"]
    cited = out["content"]["references"]
    assert cited and all(r["number"] >= 1 for r in cited) and f"[{cited[0]['number']}]" in out["content"]["message"]
    assert cited[0]["url"] in {d["url"] for d in out["content"]["documents"]}


def test_a_follow_up_is_answered_from_the_turn_it_follows(local: Any) -> None:
    """With chat memory, "How long must the new one be?" after a question on resetting a password:
    alone it names nothing the generator can quote; asked with the turn before, it is answered, and
    the sentence quoted must still hold one of the follow-up's own words (a follow-up on something
    the documents do not say is still abstained on)."""
    history = [
        {"role": "user", "content": "How do I reset my password?"},
        {"role": "assistant", "content": "Open the self-service portal and click Forgot password. [1]"},
    ]
    app = local(chat_memory_enabled=True)
    question = {"query": "How long must the new one be?"}
    alone = app.post(f"{API}/ai/rag", json=question).get_json()
    assert "twelve characters" not in str(alone["content"].get("message")), alone
    follow = app.post(f"{API}/ai/rag", json={**question, "history": history}).get_json()
    assert "A new password must contain at least twelve characters" in follow["content"]["message"], follow
    unanswered = app.post(f"{API}/ai/rag", json={"query": "And the dress code?", "history": history}).get_json()
    assert unanswered["status"] == "ERROR" or unanswered["content"]["message"] == NOT_FOUND, unanswered
