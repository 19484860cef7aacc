"""chat-core's exact request on the real Solr, with the recording LLM stub: every field of its
request model answered and honoured — ``collection_name``, ``metadata_filter_key/values``
(whitelisted fields, only narrowing), ``top_k``, ``temperature``, ``use_paragraph``, ``is_test``
and ``user_id`` (never trusted) — and random users who, whatever they send, read only what they
may (the control, with both ACL layers off, leaks)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.acl_harness import EVERY_TOKEN, POOL, layers_off, random_acl, reference_allows
from datafari_rag.testing.fake_llm import FakeLlm
from tests.integration.conftest import mapped_users

API = "/Datafari/rest/v2.0"
QUESTION = "When is the cooling pump inspected?"


def chat_core(**change: Any) -> dict[str, Any]:
    """chat-core's request, every field of its model."""
    return {
        "query": QUESTION,
        "room_id": None,
        "user_id": "admin",
        "collection_name": "cc",
        "search_type": "rag",
        "metadata_filter_key": "extension",
        "metadata_filter_values": ["pdf"],
        "top_k": 3,
        "temperature": 0.7,
        "use_paragraph": True,
        "is_test": False,
        **change,
    }


class World:
    def __init__(self, rng: random.Random) -> None:
        self.users = {f"user{i}": frozenset(rng.sample(POOL, rng.randint(0, 4))) for i in range(8)}
        self.docs = {
            f"cc-{i}": {
                "id": f"cc-{i}",
                "title": f"Pump note {i}",
                "url": f"file://cc/{i}",
                "extension": rng.choice(["pdf", "docx"]),
                "exactContent": f"The cooling pump of line {i} is inspected every week by crew {i}.",
                **random_acl(rng),
            }
            for i in range(30)
        }

    def readable(self, user: str) -> set[str]:
        return {i for i, d in self.docs.items() if reference_allows(self.users[user], d)}


@pytest.fixture(scope="module")
def world(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, World]:
    w = World(random.Random(31))
    users = {u: sorted(t) for u, t in w.users.items()} | {EVERY_TOKEN: sorted(POOL), "admin": sorted(POOL)}
    mine = mapped_users(settings, tmp_path_factory.mktemp("chat-core"), "cc", users).replace(
        retrieval_method="bm25",
        max_files=30,
        chat_collection_aliases="pumps",
    )
    bootstrap(solr, mine)
    assert all(r.status == "ok" for r in Indexer.of(solr, mine).add(list(w.docs.values()), commit=True))
    return mine, w


@pytest.fixture
def client(world: tuple[Settings, World], fake_llm_server: tuple[FakeLlm, str], fake_llm: FakeLlm) -> FlaskClient:
    return create_app(world[0].replace(llm_endpoint=fake_llm_server[1])).test_client()


def sse(client: FlaskClient, body: dict[str, Any], user: str) -> list[dict[str, Any]]:
    headers = {"Accept": "text/event-stream", "X-Remote-User": user}
    text = client.post(f"{API}/ai/stream", json=body, headers=headers).get_data(as_text=True)
    return [json.loads(b[len("data: ") :]) for b in text.split("\n\n") if b.startswith("data: ")]


def sent_ids(events: list[dict[str, Any]]) -> set[str]:
    step = next((e for e in events if e["type"] == "step" and e["id"] == "sources"), None)
    return {s["id"] for s in step["references"]} if step else set()


def test_chat_cores_exact_request_is_answered_and_every_field_honoured(
    client: FlaskClient, world: tuple[Settings, World], fake_llm: FakeLlm
) -> None:
    w = world[1]
    user = max(w.users, key=lambda u: len(w.readable(u)))
    events = sse(client, chat_core(), user)
    assert events[-1]["type"] == "done", events[-3:]
    ids = sent_ids(events)
    pdfs = {i for i in w.readable(user) if w.docs[i]["extension"] == "pdf"}
    assert ids and ids <= pdfs and len(ids) <= 3  # the metadata filter narrows; top_k bounds
    assert fake_llm.temperatures == [0.7]  # this answer's temperature, not llm.temperature
    assert events[-1]["final_response"] == "A fake answer."
    # the same request through ai/rag and POST ai
    rag = client.post(f"{API}/ai/rag", json=chat_core(), headers={"X-Remote-User": user}).get_json()
    assert rag["status"] == "OK" and {d["id"] for d in rag["content"]["documents"]} == ids
    seven = client.post(f"{API}/ai", json=chat_core(), headers={"X-Remote-User": user}).get_json()
    assert seven["status"] == "OK" and {s["id"] for s in seven["content"]["sources"]} == ids


def test_an_alias_names_the_collection_and_another_name_is_refused(client: FlaskClient) -> None:
    as_admin = {"X-Remote-User": "admin"}  # who may read every document
    for name in ("cc", "cc_FileShare", "pumps"):
        answered = client.post(f"{API}/ai/rag", json=chat_core(collection_name=name), headers=as_admin).get_json()
        assert answered["status"] == "OK", (name, answered)
    for name in ("VectorMain", "other_FileShare", "cc_VectorMain"):
        refused = client.post(f"{API}/ai/rag", json=chat_core(collection_name=name), headers=as_admin).get_json()
        assert refused["content"]["error"]["label"] == "ragBadRequest", (name, refused)


def test_a_test_request_keeps_no_turn(client: FlaskClient, world: tuple[Settings, World]) -> None:
    user = "user1"
    cid = client.post(f"{API}/conversations", json={}, headers={"X-Remote-User": user}).get_json()
    cid = cid["content"]["conversation"]["id"]
    for is_test in (True, False):
        body = chat_core(room_id=cid, is_test=is_test, metadata_filter_key=None, metadata_filter_values=None)
        client.post(f"{API}/ai/rag", json=body, headers={"X-Remote-User": user})
    blocks = client.get(f"{API}/conversations/{cid}", headers={"X-Remote-User": user}).get_json()
    assert len(blocks["content"]["conversation"]["blocks"]) == 1  # only the one that was not a test


def leaks(client: FlaskClient, w: World, rng: random.Random) -> list[str]:
    """Each random user, with random chat-core fields (another user_id, every filter value, the
    whole top_k): sources outside what that user may read."""
    found = []
    for user in w.users:
        body = chat_core(
            user_id=rng.choice([*w.users, "admin", EVERY_TOKEN]),
            metadata_filter_values=rng.choice([["pdf"], ["docx"], ["pdf", "docx"]]),
            top_k=rng.choice([1, 10, 50]),
            use_paragraph=rng.choice([True, False]),
        )
        found += [f"{user}:{i}" for i in sent_ids(sse(client, body, user)) - w.readable(user)]
    return found


def test_random_users_read_only_their_documents_whatever_they_send(
    client: FlaskClient, world: tuple[Settings, World]
) -> None:
    assert leaks(client, world[1], random.Random(5)) == []


def test_the_control_with_both_layers_off_finds_the_leaks(
    client: FlaskClient, world: tuple[Settings, World], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("datafari_rag.solr.search.acl_params", layers_off("both"))
    assert len(leaks(client, world[1], random.Random(5))) >= 3


HISTORY = [
    {"role": "user", "content": "Which pumps are there?", "block_class": "text", "metadata": {"topic": "pumps"}},
    {"role": "assistant", "content": "Hidden reasoning.", "block_class": "think"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
    {"role": "tool", "content": "old result", "tool_call_id": "c1", "name": "search_documents"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c2", "type": "function"}]},
    {"role": "tool", "content": "Pump 4 is new.", "tool_call_id": "c2", "name": "search_documents"},
    {"role": "assistant", "content": "There are pumps 1 to 30.", "metadata": {"topic": "pumps"}},
    {"role": "user", "content": "And the canteen menu?", "metadata": {"topic": "canteen"}},
]


def test_chat_cores_history_is_filtered_by_block_class_and_metadata_and_its_tool_messages_pruned(
    world: tuple[Settings, World], fake_llm_server: tuple[FakeLlm, str], fake_llm: FakeLlm
) -> None:
    memory = {"llm_endpoint": fake_llm_server[1], "chat_memory_enabled": True, "chat_history_size": 20}
    as_admin = {"X-Remote-User": "admin"}

    def turns(settings: Settings, **body: Any) -> list[dict[str, str]]:
        client = create_app(settings).test_client()
        answered = client.post(f"{API}/ai/rag", json=chat_core(history=HISTORY, **body), headers=as_admin)
        assert answered.get_json()["status"] == "OK", answered.get_json()
        return fake_llm.messages()[-1][1:-1]  # between the instructions and the question

    # by default: every class, tool calls without text gone, no tool result
    assert [t["content"] for t in turns(world[0].replace(**memory))] == [
        "Which pumps are there?",
        "Hidden reasoning.",
        "There are pumps 1 to 30.",
        "And the canteen menu?",
    ]
    text_only = world[0].replace(**memory, chat_history_block_classes="text", chat_history_tool_results=1)
    assert turns(text_only) == [
        {"role": "user", "content": "Which pumps are there?"},
        {"role": "assistant", "content": "Result of search_documents: Pump 4 is new."},  # the last result only
        {"role": "assistant", "content": "There are pumps 1 to 30."},
        {"role": "user", "content": "And the canteen menu?"},
    ]
    # the request narrows: only the pumps messages; it cannot bring back what the settings drop
    narrowed = turns(text_only, history_filter={"block_classes": ["text", "think"], "metadata": {"topic": ["pumps"]}})
    assert [t["content"] for t in narrowed] == ["Which pumps are there?", "There are pumps 1 to 30."]


@pytest.mark.parametrize(
    "body",
    [
        {"history_filter": {"block_classes": "text"}},
        {"history_filter": {"metadata": {"topic": "pumps"}}},
        {"history_filter": {"other": []}},
        {"history_filter": []},
        {"history": [{"role": "user", "content": "x", "block_class": "no spaces allowed"}]},
        {"history": [{"role": "user", "content": "x", "metadata": {"k": {"nested": 1}}}]},
        {"history": [{"role": "user", "content": "x", "tool_calls": []}]},
        {"history": [{"role": "tool", "content": "x", "name": 3}]},
        {"history": [{"role": "robot", "content": "x"}]},
    ],
)
def test_bad_history_fields_are_refused(client: FlaskClient, body: dict[str, Any]) -> None:
    refused = client.post(f"{API}/ai/rag", json=chat_core(**body), headers={"X-Remote-User": "admin"}).get_json()
    assert refused["status"] == "ERROR" and refused["content"]["error"]["label"] == "ragBadRequest", refused
