"""The agentic mode (the LLM answers through the product's tools) and the gpt mode (no search),
on a real Solr with a scripted fake LLM: the tool loop and its events, the user's access in every
tool, bounds, bad tool calls, and citations."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import serve
from tests.integration.conftest import mapped_users

API = "/Datafari/rest/v2.0"
SECRET = "The board approved a bonus pool of 70000 euros for the pump team."
DOCS = [
    ("ag-1", "Pump schedule", "The cooling pump is inspected every Monday by the day shift. " * 3, {}),
    ("ag-2", "Valve guide", "Valves are replaced every five years by the maintenance team.", {}),
    ("ag-3", "Pump bonus", SECRET, {"allow_token_document": ["board"]}),
]


@pytest.fixture(scope="module")
def agentic_settings(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    folder = tmp_path_factory.mktemp("agentic")
    mine = mapped_users(settings, folder, "agentic", {"bea": ["board"], "otto": []})
    bootstrap(solr, mine)
    docs = [{"id": i, "title": t, "url": f"file://ag/{i}.txt", "exactContent": text, **acl} for i, t, text, acl in DOCS]
    assert all(r.status == "ok" for r in Indexer.of(solr, mine).add(docs, commit=True))
    return mine


@pytest.fixture
def client_for(agentic_settings: Settings, fake_llm_server: tuple[FakeLlm, str]) -> Callable[..., FlaskClient]:
    return lambda **o: create_app(agentic_settings.replace(llm_endpoint=fake_llm_server[1], **o)).test_client()


def scripted(*replies: Any) -> Callable[[str], Any]:
    """The fake LLM's replies, one per call, in order (the last one repeats)."""
    queue = list(replies)
    return lambda prompt: queue.pop(0) if len(queue) > 1 else queue[0]


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def agentic(client: FlaskClient, user: str, query: str) -> Any:
    body = {"query": query, "search_type": "agentic"}
    return client.post(f"{API}/ai/rag", json=body, headers={"X-Remote-User": user})


def stream(client: FlaskClient, user: str, **body: Any) -> list[dict[str, Any]]:
    response = client.post(f"{API}/ai/stream", json=body, headers={"X-Remote-User": user})
    return [json.loads(line) for line in response.get_data(as_text=True).splitlines()]


def test_the_model_searches_reads_and_answers_with_citations(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    fake_llm.reset(
        scripted(
            tool("hybrid_search", query="cooling pump inspection"),
            tool("read_document", id="ag-1", part=0),
            "The pump is inspected every Monday [1].\nSOURCES_USED: 1",
        )
    )
    events = stream(client_for(), "bea", query="When is the pump inspected?", search_type="agentic")
    kinds = [e["type"] for e in events]
    assert kinds.count("tool.start") == kinds.count("tool.end") == kinds.count("tool.result") == 2
    ends = [e["data"] for e in events if e["type"] == "tool.end"]
    assert [(e["name"], e["status"]) for e in ends] == [("hybrid_search", "ok"), ("read_document", "ok")]
    [final] = [e["data"] for e in events if e["type"] == "message.final"]
    assert final["text"] == "The pump is inspected every Monday [1]."
    assert [(r["number"], r["id"]) for r in final["references"]] == [(1, "ag-1")]
    calls = fake_llm.messages()
    assert len(calls) == 3 and calls[0][0]["content"].startswith("Task: agent")
    tool_messages = [m for m in calls[2] if m["role"] == "tool"]
    assert len(tool_messages) == 2 and '<document number="1" title="Pump schedule">' in tool_messages[0]["content"]
    assert tool_messages[1]["content"].startswith("Part 0 of 1.")
    [sources] = [e["data"]["items"] for e in events if e["type"] == "sources.final"]
    assert sources[0]["id"] == "ag-1"


@pytest.mark.parametrize(
    "call",
    [
        tool("hybrid_search", query="pump bonus pool euros board"),
        tool("bm25_search", query="bonus pool board"),
        tool("search_in_document", id="ag-3", query="bonus"),
        tool("read_document", id="ag-3"),
        tool("summarize", id="ag-3"),
    ],
)
def test_every_tool_runs_with_the_callers_access(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm, call: dict[str, Any]
) -> None:
    """otto may not read the bonus document: no tool brings a word of it to the model or to him;
    bea, who may, gets it."""
    fake_llm.reset(scripted(call, "Done."))
    out = agentic(client_for(), "otto", "bonus?")
    seen = "\n".join(fake_llm.prompts()) + out.get_data(as_text=True)
    assert "70000" not in seen and "Pump bonus" not in seen
    fake_llm.reset(scripted(call, "Done."))
    agentic(client_for(), "bea", "bonus?")
    if call["tool_calls"][0]["name"] != "summarize":  # the fake LLM writes summaries itself
        assert "70000" in "\n".join(fake_llm.prompts())


def test_the_loop_is_bounded_and_then_asked_to_answer(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    fake_llm.reset(lambda prompt: tool("bm25_search", query="pump"))  # never stops calling tools
    client = client_for(agentic_max_steps=3, agentic_max_tool_calls=10)
    out = client.post(
        f"{API}/ai/rag", json={"query": "pump?", "search_type": "agentic"}, headers={"X-Remote-User": "otto"}
    )
    assert len(fake_llm.prompts()) == 4  # three turns with tools, then one without
    assert out.get_json()["content"]["error"]["label"] == "ragNoValidAnswer"  # the last turn answered no text
    fake_llm.reset(lambda prompt: {"tool_calls": [{"name": "bm25_search", "arguments": {"query": "pump"}}] * 4})
    events = stream(
        client_for(agentic_max_steps=5, agentic_max_tool_calls=6), "otto", query="pump?", search_type="agentic"
    )
    assert [e["type"] for e in events].count("tool.start") == 6  # the tool budget, across turns


def test_bad_tool_calls_are_told_to_the_model_and_the_loop_goes_on(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    fake_llm.reset(
        scripted(
            {
                "tool_calls": [
                    {"name": "drop_index", "arguments": {}},
                    {"name": "read_document", "arguments": {"part": -1}},
                ]
            },
            tool("read_document", id="ag-1", part=7),
            "No answer [9].",
        )
    )
    out = client_for().post(
        f"{API}/ai/rag", json={"query": "pump?", "search_type": "agentic"}, headers={"X-Remote-User": "otto"}
    )
    body = out.get_json()
    tool_results = [m["content"] for m in fake_llm.messages()[-1] if m["role"] == "tool"]
    assert tool_results[0] == "There is no tool named 'drop_index'."
    assert tool_results[1].startswith("The tool's arguments are not valid")
    assert tool_results[2] == "The document has 1 part(s), numbered from 0."
    assert body["status"] == "OK" and body["content"]["references"] == []  # [9] matches no source


def test_gpt_mode_answers_from_the_conversation_without_searching(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    fake_llm.reset(lambda prompt: "Your dog is called Jumpy.")
    history = [{"role": "user", "content": "My dog is called Jumpy."}, {"role": "assistant", "content": "Noted."}]
    body = {"query": "What is my dog called?", "search_type": "gpt", "history": history}
    out = client_for(chat_memory_enabled=False).post(f"{API}/ai/rag", json=body, headers={"X-Remote-User": "bea"})
    content = out.get_json()["content"]
    assert content["message"] == "Your dog is called Jumpy." and content["documents"] == []
    [messages] = fake_llm.messages()
    assert messages[0]["content"].startswith("Task: chat") and messages[1]["content"] == "My dog is called Jumpy."
    assert "<document" not in json.dumps(messages)


def test_a_bad_search_type_is_refused(client_for: Callable[..., FlaskClient]) -> None:
    out = client_for().post(f"{API}/ai/rag", json={"query": "pump?", "search_type": "magic"}).get_json()
    assert out["content"]["error"]["label"] == "ragBadRequest" and "search_type" in out["content"]["error"]["reason"]


def test_tools_of_an_external_mcp_server_are_offered_and_called(
    agentic_settings: Settings, fake_llm_server: tuple[FakeLlm, str], fake_llm: FakeLlm
) -> None:
    """Another sidecar's MCP server (anonymous callers allowed) as the external server: its tools
    are offered as kb__<tool>, a call reaches it, and an unreachable server is left out."""
    with serve(create_app(agentic_settings.replace(anonymous_allowed=True))) as other:
        mine = agentic_settings.replace(
            llm_endpoint=fake_llm_server[1], agentic_mcp_servers=f"kb={other}/mcp, gone=http://127.0.0.1:1/mcp"
        )
        fake_llm.reset(scripted(tool("kb__search", query="valves replaced", rows=2), "Valves every five years."))
        out = agentic(create_app(mine).test_client(), "otto", "How often are valves replaced?").get_json()
    assert out["status"] == "OK" and out["content"]["message"] == "Valves every five years."
    offered = {t["function"]["name"] for t in fake_llm.tools[0]}
    assert {"kb__search", "kb__vector_search", "kb__rag", "kb__summarize", "hybrid_search"} <= offered
    assert not any(name.startswith("gone__") for name in offered)
    [result] = [m["content"] for m in fake_llm.messages()[-1] if m["role"] == "tool"]
    assert "Valve guide" in result and "ag-2" in result
