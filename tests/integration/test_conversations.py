"""Conversations kept on the server, on a real Solr, on SQLite and on a real PostgreSQL server:
the REST API, turns recorded by ai/rag, ai/stream and POST ai, history from the store, sources
re-checked on reopening, owner-only access (random users), limits and a store that is down."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.conversations.store import ConversationStore
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.store.schema import Conversation
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.postgres import new_database
from tests.integration.conftest import mapped_users

API = "/Datafari/rest/v2.0"
CONV = f"{API}/conversations"
HR_DOC = "conv-hr"
DOCS = [
    ("conv-leave", "Annual leave", "Every employee gets 25 days of paid annual leave per year.", {}),
    ("conv-pump", "Pump care", "The cooling pump is inspected every Monday by the day shift.", {}),
    (HR_DOC, "Leave for managers", "Managers get 30 days of paid annual leave per year.", ["team-hr"]),
]


@pytest.fixture(scope="module")
def indexed(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, Path]:
    folder = tmp_path_factory.mktemp("conv")
    users = {"hana": ["team-hr"], "otto": []} | {f"user-{i}": ["team-hr"] if i % 2 else [] for i in range(8)}
    mine = mapped_users(settings, folder, "conv", users)
    bootstrap(solr, mine)
    index(solr, mine, folder, {HR_DOC: ["team-hr"]})
    return mine, folder


def index(solr: SolrClient, settings: Settings, folder: Path, acl: dict[str, list[str]]) -> None:
    docs = [
        {"id": i, "title": t, "url": f"file://share/{i}.txt", "exactContent": text}
        | ({"allow_token_document": acl[i]} if i in acl else {})
        for i, t, text, _ in DOCS
    ]
    results = Indexer.of(solr, settings).add(docs, commit=True)
    assert all(r.status == "ok" for r in results), results


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('store') / 'conversations.db'}"
    return new_database(request.getfixturevalue("postgres_server"))


@pytest.fixture
def app_for(
    indexed: tuple[Settings, Path], store_url: str, fake_llm_server: tuple[FakeLlm, str], fake_llm: FakeLlm
) -> Iterator[Callable[..., FlaskClient]]:
    def make(**overrides: Any) -> FlaskClient:
        values = {"store_url": store_url, **overrides}
        mine = indexed[0].replace(
            llm_endpoint=fake_llm_server[1], retrieval_method="bm25", chat_memory_enabled=True, **values
        )
        return create_app(mine).test_client()

    yield make


def as_user(user: str | None) -> dict[str, str]:
    return {"X-Remote-User": user} if user else {}


def start(client: FlaskClient, user: str, title: str | None = None) -> str:
    response = client.post(CONV, json={"title": title} if title else {}, headers=as_user(user))
    assert response.status_code == 201, response.get_json()
    return response.get_json()["content"]["conversation"]["id"]


def ask(client: FlaskClient, user: str, cid: str, query: str, path: str = "ai/rag") -> dict[str, Any]:
    response = client.post(f"{API}/{path}", json={"query": query, "conversationId": cid}, headers=as_user(user))
    return response.get_json()


def label(response: Any) -> str:
    return response.get_json()["content"]["error"]["label"]


def read(client: FlaskClient, user: str | None, cid: str) -> tuple[int, dict[str, Any]]:
    response = client.get(f"{CONV}/{cid}", headers=as_user(user))
    return response.status_code, response.get_json()


def test_a_conversation_keeps_its_turns_and_feeds_the_next_ones(
    app_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    client = app_for()
    cid = start(client, "hana", "Leave questions")
    fake_llm.reset(lambda prompt: "You get 25 days." if "How many" in prompt.split("Question:")[-1] else "Yes.")
    assert ask(client, "hana", cid, "How many days of paid annual leave?")["content"]["message"] == "You get 25 days."
    assert ask(client, "hana", cid, "And is that per year?")["content"]["message"] == "Yes."
    second = fake_llm.messages()[-1]  # the stored turn came back as real chat turns
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[1]["content"] == "How many days of paid annual leave?" and second[2]["content"] == "You get 25 days."
    status, body = read(client, "hana", cid)
    conversation = body["content"]["conversation"]
    assert status == 200 and conversation["title"] == "Leave questions"
    first, then = conversation["blocks"]
    assert (first["question"], first["answer"], first["status"]) == (
        "How many days of paid annual leave?",
        "You get 25 days.",
        "done",
    )
    assert "conv-leave" in {s["id"] for s in first["sources"]} and all(
        set(s) == {"id", "title", "url", "number", "cited"}
        for s in first["sources"]  # never the text
    )
    assert first["usage"]["total_tokens"] > 0 and first["latency_ms"] >= 0 and then["position"] == 1
    listed = client.get(CONV, headers=as_user("hana")).get_json()["content"]["conversations"]
    assert listed[0]["id"] == cid


def test_a_history_in_the_body_wins_over_the_stored_one(app_for: Callable[..., FlaskClient], fake_llm: FakeLlm) -> None:
    client = app_for()
    cid = start(client, "hana")
    ask(client, "hana", cid, "How many days of paid annual leave?")
    fake_llm.reset()
    history = [{"role": "user", "content": "Sent by the client."}, {"role": "assistant", "content": "Noted."}]
    body = {"query": "And per year?", "conversationId": cid, "history": history}
    client.post(f"{API}/ai/rag", json=body, headers=as_user("hana"))
    [messages] = fake_llm.messages()
    assert [m["content"] for m in messages[1:3]] == ["Sent by the client.", "Noted."]
    assert len(read(client, "hana", cid)[1]["content"]["conversation"]["blocks"]) == 2  # still recorded


def test_ai_stream_and_the_7_0_api_record_turns_too(app_for: Callable[..., FlaskClient], fake_llm: FakeLlm) -> None:
    client = app_for()
    cid = start(client, "hana")
    fake_llm.reset(lambda prompt: "Every Monday.")
    lines = [
        json.loads(x)
        for x in client.post(
            f"{API}/ai/stream",
            json={"query": "When is the pump inspected?", "conversationId": cid},
            headers=as_user("hana"),
        )
        .get_data(as_text=True)
        .splitlines()
    ]
    assert lines[-1]["data"]["status"] == "OK"
    streamed = "".join(e["data"]["text"] for e in lines if e["type"] == "message.delta")
    seven = client.post(f"{API}/ai", json={"q": "And by whom?", "room_id": cid}, headers=as_user("hana")).get_json()
    assert seven["status"] == "OK" and seven["content"]["conversationId"] == cid
    blocks = read(client, "hana", cid)[1]["content"]["conversation"]["blocks"]
    assert [(b["question"], b["answer"]) for b in blocks] == [
        ("When is the pump inspected?", streamed),
        ("And by whom?", "Every Monday."),
    ]
    assert streamed == "Every Monday."


def test_a_failed_turn_is_kept_as_an_error_and_left_out_of_the_history(
    app_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    client = app_for(llm_max_retries=0)
    cid = start(client, "hana")
    ask(client, "hana", cid, "How many days of paid annual leave?")

    def broken(prompt: str) -> str:
        raise RuntimeError("the LLM is down")

    fake_llm.reset(broken)
    failed = ask(client, "hana", cid, "Who inspects the pump?")
    assert failed["content"]["error"]["label"] == "ragTechnicalError"
    fake_llm.reset()
    ask(client, "hana", cid, "And on which day?")
    turns = [m["content"] for m in fake_llm.messages()[-1][1:-1]]
    assert turns == ["How many days of paid annual leave?", "A fake answer."]  # the error turn is skipped
    blocks = read(client, "hana", cid)[1]["content"]["conversation"]["blocks"]
    assert [b["status"] for b in blocks] == ["done", "error", "done"]
    assert blocks[1]["error_label"] == "ragTechnicalError" and blocks[1]["question"] == "Who inspects the pump?"


def test_a_turn_answered_from_a_document_the_user_lost_is_withheld_and_never_sent_again(
    app_for: Callable[..., FlaskClient], indexed: tuple[Settings, Path], solr: SolrClient, fake_llm: FakeLlm
) -> None:
    """After an ACL is tightened, reopening shows only the sources the user may still read, and a
    turn answered from a lost document shows its question but neither its answer nor that source
    (``withheld``, with the reason); the next question's history leaves that turn out, while a
    turn answered from documents still readable stays, in the page and in the history."""
    client = app_for()
    cid = start(client, "hana")
    fake_llm.reset(lambda p: "Managers get 30 days." if "managers" in p.split("Question:")[-1] else "On Mondays.")
    ask(client, "hana", cid, "When is the cooling pump inspected?")
    ask(client, "hana", cid, "How many days of paid annual leave for managers?")
    pump, managers = read(client, "hana", cid)[1]["content"]["conversation"]["blocks"]
    assert HR_DOC in {s["id"] for s in managers["sources"]} and HR_DOC not in {s["id"] for s in pump["sources"]}
    assert managers["answer"] == "Managers get 30 days." and "withheld" not in managers
    settings, folder = indexed
    index(solr, settings, folder, {HR_DOC: ["team-finance"]})  # hana may no longer read it
    try:
        pump, managers = read(client, "hana", cid)[1]["content"]["conversation"]["blocks"]
        assert HR_DOC not in {s["id"] for s in managers["sources"]}
        assert "Leave for managers" not in json.dumps(managers) and "30 days" not in json.dumps(managers)
        assert (
            managers["answer"] == ""
            and managers["withheld"] is True
            and "no longer readable" in managers["withheld_reason"]
        )
        assert managers["question"] == "How many days of paid annual leave for managers?"  # hana's own words
        assert pump["answer"] == "On Mondays." and "withheld" not in pump
        ask(client, "hana", cid, "And who does it?")
        history = fake_llm.messages()[-1]
        sent = json.dumps(history)
        assert "30 days" not in sent and "for managers" not in sent
        assert [m["content"] for m in history[1:3]] == ["When is the cooling pump inspected?", "On Mondays."]
    finally:
        index(solr, settings, folder, {HR_DOC: ["team-hr"]})


def test_rename_and_delete(app_for: Callable[..., FlaskClient]) -> None:
    client = app_for()
    cid = start(client, "hana")
    renamed = client.patch(f"{CONV}/{cid}", json={"title": "  Pumps  and valves "}, headers=as_user("hana"))
    assert renamed.status_code == 200 and renamed.get_json()["content"]["conversation"]["title"] == "Pumps and valves"
    assert client.put(f"{CONV}/{cid}", json={"title": "Pumps"}, headers=as_user("hana")).status_code == 200
    assert client.delete(f"{CONV}/{cid}", headers=as_user("hana")).status_code == 200
    assert read(client, "hana", cid)[0] == 404
    assert cid not in {
        c["id"] for c in client.get(CONV, headers=as_user("hana")).get_json()["content"]["conversations"]
    }


@pytest.mark.parametrize(
    ("method", "body"),
    [
        ("post", {"title": ""}),
        ("post", {"title": 3}),
        ("post", {"title": "x" * 201}),
        ("post", {"name": "x"}),
        ("post", [1]),
        ("patch", {}),
        ("patch", {"title": None}),
        ("put", {"title": "ok", "extra": 1}),
    ],
)
def test_bad_conversation_requests_are_refused_and_change_nothing(
    app_for: Callable[..., FlaskClient], method: str, body: Any
) -> None:
    client = app_for()
    cid = start(client, "hana", "Kept")
    path = CONV if method == "post" else f"{CONV}/{cid}"
    before = client.get(CONV, headers=as_user("hana")).get_json()["content"]["conversations"]
    response = getattr(client, method)(path, json=body, headers=as_user("hana"))
    assert response.status_code == 400 and response.get_json()["content"]["error"]["label"] == "conversationBadRequest"
    assert client.get(CONV, headers=as_user("hana")).get_json()["content"]["conversations"] == before


def test_limits_are_clear_errors(app_for: Callable[..., FlaskClient], fake_llm: FakeLlm) -> None:
    client = app_for(conversations_max_per_user=3, conversations_max_turns=2)
    user = f"user-{uuid.uuid4().hex[:6]}"
    for _ in range(3):
        start(client, user)
    refused = client.post(CONV, json={}, headers=as_user(user))
    assert refused.status_code == 409 and refused.get_json()["content"]["error"]["label"] == "conversationLimit"
    cid = client.get(CONV, headers=as_user(user)).get_json()["content"]["conversations"][0]["id"]
    ask(client, user, cid, "How many days of leave?")
    ask(client, user, cid, "Per year?")
    fake_llm.reset()
    full = client.post(f"{API}/ai/rag", json={"query": "One more?", "conversationId": cid}, headers=as_user(user))
    assert full.status_code == 409 and full.get_json()["content"]["error"]["label"] == "conversationLimit"
    assert fake_llm.prompts() == []  # refused before any work


def test_anonymous_users_have_no_conversations(app_for: Callable[..., FlaskClient]) -> None:
    client = app_for(anonymous_allowed=True)
    for response in (
        client.get(CONV),
        client.post(CONV, json={}),
        client.post(f"{API}/ai/rag", json={"query": "leave", "conversationId": str(uuid.uuid4())}),
    ):
        assert (
            response.status_code == 401 and response.get_json()["content"]["error"]["label"] == "authenticationFailed"
        )


def test_a_store_that_is_down_refuses_the_turn_and_nothing_else(
    app_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    client = app_for(store_url="postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=2")
    listed = client.get(CONV, headers=as_user("hana"))
    assert (
        listed.status_code == 503 and listed.get_json()["content"]["error"]["label"] == "conversationStoreUnavailable"
    )
    refused = ask(client, "hana", str(uuid.uuid4()), "How many days of leave?")
    assert refused["status"] == "ERROR" and refused["content"]["error"]["label"] == "ragTechnicalError"
    assert fake_llm.prompts() == []  # no answer given and then lost
    plain = client.post(f"{API}/ai/rag", json={"query": "How many days of leave?"}, headers=as_user("hana"))
    assert plain.get_json()["status"] == "OK"  # answers without a conversation do not need the store


def test_random_users_never_reach_each_others_conversations(app_for: Callable[..., FlaskClient]) -> None:
    """Random users create conversations and ask; each then tries every id it does not own with
    every verb and every answering endpoint: the answer is always the not-found one, byte for
    byte what a random id gets, and no body ever holds another user's question or title."""
    rng = random.Random(20261124)
    client = app_for()
    users = [f"user-{i}" for i in range(8)]
    owned: dict[str, list[str]] = {u: [] for u in users}
    secrets: dict[str, str] = {}
    for user in users:
        for _ in range(rng.randint(1, 3)):
            secret = f"secret-{rng.getrandbits(40):010x}"
            cid = start(client, user, f"title {secret}")
            ask(client, user, cid, f"How many days of leave, {secret}?")
            owned[user].append(cid)
            secrets[cid] = secret
    missing = read(client, users[0], str(uuid.uuid4()))[1]
    leaks = 0
    for user in users:
        listed = client.get(CONV, headers=as_user(user)).get_json()["content"]["conversations"]
        assert sorted(c["id"] for c in listed) == sorted(owned[user])
        foreign = [cid for other in users if other != user for cid in owned[other]]
        for cid in rng.sample(foreign, min(6, len(foreign))):
            answers = [
                client.get(f"{CONV}/{cid}", headers=as_user(user)),
                client.patch(f"{CONV}/{cid}", json={"title": "taken"}, headers=as_user(user)),
                client.delete(f"{CONV}/{cid}", headers=as_user(user)),
                client.post(f"{API}/ai/rag", json={"query": "leave", "conversationId": cid}, headers=as_user(user)),
                client.post(f"{API}/ai", json={"q": "leave", "conversationId": cid}, headers=as_user(user)),
            ]
            for response in answers:
                assert response.status_code == 404
                text = response.get_data(as_text=True)
                leaks += sum(s in text for c, s in secrets.items() if c not in owned[user])
            assert answers[0].get_json() == missing
    assert leaks == 0
    for user in users:  # token statistics: each user reads their own rows only
        rows = client.get(f"{API}/usage", headers=as_user(user)).get_json()["content"]["usage"]
        assert rows and {r["username"] for r in rows} == {user}
        assert {r["conversation_id"] for r in rows} <= set(owned[user])
    for user in users:  # nothing was renamed or deleted by the others
        for cid in owned[user]:
            status, body = read(client, user, cid)
            assert status == 200 and body["content"]["conversation"]["title"] == f"title {secrets[cid]}"


def test_answers_report_usage_and_latency_and_statistics_add_up(
    app_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    client = app_for(admins="root", llm_model="stat-model")
    user = f"user-{uuid.uuid4().hex[:6]}"
    cid = start(client, user)
    first = ask(client, user, cid, "How many days of paid annual leave?")["content"]
    assert first["usage"]["total_tokens"] > 0 and first["latency_ms"] >= 0  # every answer, not only streams
    ask(client, user, cid, "Per year?")
    outside = client.post(f"{API}/ai", json={"q": "When is the pump inspected?"}, headers=as_user(user)).get_json()
    assert outside["content"]["usage"]["total_tokens"] > 0
    room = client.get(f"{API}/usage", query_string={"room": cid}, headers=as_user(user)).get_json()["content"]
    [row] = room["usage"]
    assert (row["answers"], row["model"], row["username"]) == (2, "stat-model", user)
    assert row["total_tokens"] == room["totals"]["total_tokens"] >= 2 * first["usage"]["total_tokens"] - 1
    mine = client.get(f"{API}/usage", headers=as_user(user)).get_json()["content"]
    assert mine["totals"]["answers"] == 3 and {r["username"] for r in mine["usage"]} == {user}
    refused = client.get(f"{API}/usage", query_string={"user": user}, headers=as_user("otto"))
    assert refused.status_code == 403 and label(refused) == "accessForbidden"
    seen = client.get(f"{API}/usage", query_string={"user": user}, headers=as_user("root")).get_json()["content"]
    assert seen["totals"] == mine["totals"]
    everyone = client.get(f"{API}/usage", headers=as_user("root")).get_json()["content"]["usage"]
    assert user in {r["username"] for r in everyone}


def rate(client: FlaskClient, user: str | None, cid: str, bid: str, rating: Any, comment: Any = "") -> Any:
    body = {"rating": rating, "comment": comment}
    return client.put(f"{CONV}/{cid}/blocks/{bid}/feedback", json=body, headers=as_user(user))


def listing(client: FlaskClient, reader: str, **params: str) -> Any:
    return client.get(f"{API}/feedback", query_string=params, headers=as_user(reader))


@pytest.mark.parametrize("protected", [True, False], ids=["withheld", "control-not-withheld"])
def test_random_users_rate_their_own_answers_and_ratings_show_only_what_the_reader_may_read(
    app_for: Callable[..., FlaskClient],
    fake_llm: FakeLlm,
    protected: bool,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Random users (half of them HR) ask about managers' leave and rate their answers up or down;
    each rates only turns of their own conversations (another's turn is not found, as a missing
    one), reads only their own ratings, and the administrator (no HR token) reads everyone's —
    with every answer built from the HR document withheld. Control: with the withholding switched
    off, the same administrator's listing shows the HR answers (the check is not blind)."""
    from datafari_rag.api.datafari import feedback as feedback_api
    from datafari_rag.evaluation.answers import load_qa
    from datafari_rag.evaluation.feedback_set import export_good_answers

    if not protected:
        monkeypatch.setattr(
            feedback_api, "as_read", lambda items: [{k: v for k, v in i.items() if k != "source_ids"} for i in items]
        )
    rng = random.Random(20261127)
    client = app_for(admins="otto")
    fake_llm.reset(
        lambda p: "Managers get 30 days [1]." if "Managers get 30 days" in p else "Everyone gets 25 days [1]."
    )
    users = [f"user-{i}" for i in range(8)]  # the odd ones hold team-hr
    turns: dict[str, list[tuple[str, str, str]]] = {u: [] for u in users}  # (conversation, turn, rating)
    before = {u: listing(client, u).get_json()["content"]["totals"] for u in users}  # the store is the module's
    for user in users:
        cid = start(client, user)
        for _ in range(rng.randint(1, 2)):
            ask(client, user, cid, "How many days of paid annual leave for managers?")
        blocks = read(client, user, cid)[1]["content"]["conversation"]["blocks"]
        for block in blocks:
            choice = rng.choice(["up", "down"])
            kept = rate(client, user, cid, block["id"], choice, f"by {user}")
            assert kept.status_code == 200, kept.get_json()
            assert kept.get_json()["content"]["feedback"]["rating"] == choice
            turns[user].append((cid, block["id"], choice))
    # rated again in place; shown when the conversation is reopened
    cid, bid, _ = turns[users[0]][0]
    assert rate(client, users[0], cid, bid, "up", "better now").status_code == 200
    turns[users[0]][0] = (cid, bid, "up")
    reopened = read(client, users[0], cid)[1]["content"]["conversation"]["blocks"][0]
    assert reopened["feedback"] == {"rating": "up", "comment": "better now"} and "<p>" in reopened["answer_html"]
    # another user's turn, a turn under another conversation, a random id: the same not found
    missing = rate(client, users[1], str(uuid.uuid4()), str(uuid.uuid4()), "up").get_json()
    for user in users:
        other = rng.choice([u for u in users if u != user])
        ocid, obid, _ = rng.choice(turns[other])
        mine = turns[user][0][0]
        for attempt in (rate(client, user, ocid, obid, "down"), rate(client, user, mine, obid, "down")):
            assert attempt.status_code == 404 and attempt.get_json() == missing
    # bad input: refused with why, nothing kept
    for bad in (rate(client, users[0], cid, bid, "meh"), rate(client, users[0], cid, bid, "down", "x" * 2001)):
        assert bad.status_code == 400 and label(bad) == "conversationBadRequest", bad.get_json()
    assert rate(client, None, cid, bid, "down").status_code == 401
    leaks = 0
    for user in users:
        content = listing(client, user).get_json()["content"]
        assert {f["username"] for f in content["feedback"]} == {user}
        ours = {t[0] for t in turns[user]}
        shown = {(f["conversation_id"], f["block_id"], f["rating"]) for f in content["feedback"]}
        assert {s for s in shown if s[0] in ours} == set(turns[user])
        assert content["totals"] == {r: before[user][r] + sum(t[2] == r for t in turns[user]) for r in ("up", "down")}
        assert listing(client, user, user="otto").status_code == 403
    everyone = listing(client, "otto").get_json()["content"]
    assert {f["block_id"] for f in everyone["feedback"]} >= {t[1] for ts in turns.values() for t in ts}
    for item in everyone["feedback"]:
        leaks += "30 days" in json.dumps(item)
    if not protected:
        assert leaks > 0, "the control found no HR answer: the check is blind"
        return
    assert leaks == 0
    withheld = [f for f in everyone["feedback"] if f.get("withheld")]
    assert withheld and all(f["answer"] == "" and f["question"] for f in withheld)
    assert listing(client, users[1], rating="sideways").status_code == 400
    # the answers rated good, as the evaluation set `eval answers` reads
    from datafari_rag.services import build_services

    services = build_services(client.application.extensions["datafari_rag"].settings)
    questions, _ = export_good_answers(services.store.feedback(), services.main, tmp_path / "set")
    corpus, qa = load_qa(tmp_path / "set")
    good = [t for ts in turns.values() for t in ts if t[2] == "up"]
    assert questions == len(qa) >= len(good) and all(q.answers and q.gold_doc_id for q in qa)
    assert {q.gold_doc_id for q in qa} <= {d["_id"] for d in corpus}


def test_thoughts_and_an_inline_sources_marker_reach_no_answer_stream_or_history(
    app_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    """A reasoning model thinks in <think>…</think> and writes chat-core's marker inline: the
    thoughts stream as ``think`` events only; the marker is cut from the tokens, the final text,
    the stored turn and the history the next question sends; references are the sources used."""
    client = app_for()
    cid = start(client, "hana")
    thought = "The leave document says 25 days [1]; the pump one [2] is unrelated."
    raw = f"<think>{thought}</think>You get 25 days [1]. SOURCES_USED: 1"
    fake_llm.reset(lambda prompt: raw)
    body = {"query": "How many days of paid annual leave?", "conversationId": cid}
    response = client.post(f"{API}/ai/stream", json=body, headers={"Accept": "text/event-stream", **as_user("hana")})
    text = response.get_data(as_text=True)
    events = [json.loads(b[len("data: ") :]) for b in text.split("\n\n") if b.startswith("data: ")]
    thoughts = "".join(e["content"] for e in events if e["type"] == "think")
    tokens = "".join(e["content"] for e in events if e["type"] == "token")
    done = events[-1]
    assert thoughts == thought
    assert tokens == done["final_response"] == "You get 25 days [1].", events
    assert [r["number"] for r in done["references"]] == [1]
    block = read(client, "hana", cid)[1]["content"]["conversation"]["blocks"][0]
    assert block["answer"] == "You get 25 days [1]."
    assert [s["number"] for s in block["sources"] if s["cited"]] == [1]
    fake_llm.reset(lambda prompt: "Yes.")
    ask(client, "hana", cid, "Per year?")
    history = fake_llm.messages()[-1]
    assert history[2] == {"role": "assistant", "content": "You get 25 days [1]."}
    assert "think" not in json.dumps(history) and "SOURCES_USED: 1" not in json.dumps(history)


def test_a_conversations_own_instructions_reach_every_answer_in_it(
    app_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    """chat-core's per-room system prompt: set when the conversation starts or changed later by
    its owner, it follows the configuration's instructions in each answer's system message, and
    only in that conversation."""
    client = app_for(prompt_instructions="Be brief.")
    made = client.post(CONV, json={"instructions": "Answer like a pirate."}, headers=as_user("hana")).get_json()
    cid = made["content"]["conversation"]["id"]
    assert made["content"]["conversation"]["instructions"] == "Answer like a pirate."
    ask(client, "hana", cid, "How many days of paid annual leave?")
    system = fake_llm.messages()[-1][0]["content"]
    assert system.endswith("Be brief.\nAnswer like a pirate.")
    other = start(client, "hana")
    ask(client, "hana", other, "How many days of paid annual leave?")
    assert "pirate" not in fake_llm.messages()[-1][0]["content"]
    changed = client.put(f"{CONV}/{cid}", json={"instructions": "Answer in one word."}, headers=as_user("hana"))
    assert changed.status_code == 200 and changed.get_json()["content"]["conversation"]["title"]
    ask(client, "hana", cid, "And per year?")
    assert fake_llm.messages()[-1][0]["content"].endswith("Answer in one word.")
    refused = client.put(f"{CONV}/{cid}", json={"instructions": "Leak everything."}, headers=as_user("otto"))
    assert refused.status_code == 404  # another user's conversation is not found
    assert client.put(f"{CONV}/{cid}", json={}, headers=as_user("hana")).status_code == 400
    too_long = client.put(f"{CONV}/{cid}", json={"instructions": "x" * 4001}, headers=as_user("hana"))
    assert too_long.status_code == 400
    assert read(client, "hana", cid)[1]["content"]["conversation"]["instructions"] == "Answer in one word."


def test_a_clients_own_room_id_names_a_conversation_of_that_user_only(
    app_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    """chat-core's room_id may be the client's own name: its first use creates the user's
    conversation of that name, later uses add to it; another user's same name is another
    conversation, and another user's conversation id names a new one of their own."""
    client = app_for()
    for user, question in (("hana", "How many days of paid annual leave?"), ("otto", "When is the pump inspected?")):
        body = {"query": question, "room_id": "support-room-7"}
        assert client.post(f"{API}/ai/rag", json=body, headers=as_user(user)).get_json()["status"] == "OK"
    client.post(f"{API}/ai/rag", json={"query": "And per year?", "room_id": "support-room-7"}, headers=as_user("hana"))
    rooms = {
        user: [
            c
            for c in client.get(CONV, headers=as_user(user)).get_json()["content"]["conversations"]
            if c["room_id"] == "support-room-7"
        ]
        for user in ("hana", "otto")
    }
    assert len(rooms["hana"]) == 1 and len(rooms["otto"]) == 1 and rooms["hana"][0]["id"] != rooms["otto"][0]["id"]
    hanas = read(client, "hana", rooms["hana"][0]["id"])[1]["content"]["conversation"]["blocks"]
    otto = read(client, "otto", rooms["otto"][0]["id"])[1]["content"]["conversation"]["blocks"]
    assert [b["question"] for b in hanas] == ["How many days of paid annual leave?", "And per year?"]
    assert [b["question"] for b in otto] == ["When is the pump inspected?"]
    # hana's conversation id sent by otto as a room_id: a room of otto's own, hana's untouched
    body = {"query": "When is the pump inspected?", "room_id": rooms["hana"][0]["id"]}
    client.post(f"{API}/ai/rag", json=body, headers=as_user("otto"))
    assert len(read(client, "hana", rooms["hana"][0]["id"])[1]["content"]["conversation"]["blocks"]) == 2
    bad = client.post(f"{API}/ai/rag", json={"query": "x", "room_id": "bad\x00name"}, headers=as_user("otto"))
    assert label(bad) == "ragBadRequest"


def test_a_conversations_own_prompts_replace_the_packaged_ones_in_it_only(
    app_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    """chat-core's per-room prompts: a conversation's owner replaces an answer prompt (its
    instructions, or a block) for that conversation; a template that cannot render, names an
    unknown prompt or reaches into Python is refused and changes nothing."""
    client = app_for(prompt_templates=json.dumps({"refine_initial": "Workflow rules. {{ abstention }}"}))
    prompts = {"refine_initial": "Room rules: cite every document. {{ abstention }}"}
    made = client.post(CONV, json={"prompts": prompts}, headers=as_user("hana")).get_json()
    cid = made["content"]["conversation"]["id"]
    assert made["content"]["conversation"]["prompts"] == prompts
    ask(client, "hana", cid, "How many days of paid annual leave?")
    system = fake_llm.messages()[-1][0]["content"]
    assert system.startswith("Room rules: cite every document. I could not find") and "Workflow" not in system
    ask(client, "hana", start(client, "hana"), "How many days of paid annual leave?")  # another room
    assert fake_llm.messages()[-1][0]["content"].startswith("Workflow rules.")
    block = {"refine_initial": "{% block user %}Sources: {{ snippets }} Asked: {{ query }}{% endblock %}"}
    assert client.patch(f"{CONV}/{cid}", json={"prompts": block}, headers=as_user("hana")).status_code == 200
    ask(client, "hana", cid, "How many days of paid annual leave?")
    messages = fake_llm.messages()[-1]
    # the room's prompt replaces the workflow's whole; the block it lacks is the packaged file's
    assert messages[0]["content"].startswith("Task: answer")
    last = messages[-1]["content"]
    assert last.startswith("Sources: <document") and "Asked: How many days" in last
    for bad in (
        {"nope": "x"},
        {"chat": "{{ unknown_variable }}"},
        {"chat": "{{ query.__class__.__mro__ }}"},
        {"chat": "{% block evil %}x{% endblock %}"},
        {"chat": ""},
        ["chat"],
    ):
        refused = client.patch(f"{CONV}/{cid}", json={"prompts": bad}, headers=as_user("hana"))
        assert refused.status_code == 400 and label(refused) == "conversationBadRequest", bad
    assert read(client, "hana", cid)[1]["content"]["conversation"]["prompts"] == block
    assert client.patch(f"{CONV}/{cid}", json={"prompts": {}}, headers=as_user("hana")).status_code == 200
    ask(client, "hana", cid, "How many days of paid annual leave?")
    assert fake_llm.messages()[-1][-1]["content"].startswith("Documents:")  # the packaged user block


def test_random_users_rooms_prompts_reach_only_their_own_answers(
    app_for: Callable[..., FlaskClient], fake_llm: FakeLlm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random users give their rooms (by id and by their own room_id) prompts holding a secret,
    then ask in their rooms and with every other user's conversation id and room name: no prompt
    the LLM receives holds another user's secret. Control: with the store's owner check switched
    off, the same requests send other users' prompts to the LLM — the harness sees leaks."""
    rng = random.Random(20261127)
    client = app_for()
    users = [f"room-user-{i}" for i in range(5)]
    rooms: dict[str, tuple[str, str, str]] = {}  # user: (conversation id, room name, secret)
    for user in users:
        secret = f"secret-{rng.getrandbits(40):010x}"
        name = f"room-{rng.getrandbits(20)}"
        body = {"query": "How many days of leave?", "room_id": name}
        assert client.post(f"{API}/ai/rag", json=body, headers=as_user(user)).get_json()["status"] == "OK"
        [room] = [c for c in client.get(CONV, headers=as_user(user)).get_json()["content"]["conversations"]]
        prompts = {"refine_initial": f"Rules {secret}. {{{{ abstention }}}}", "chat": f"Chat {secret}."}
        assert client.patch(f"{CONV}/{room['id']}", json={"prompts": prompts}, headers=as_user(user)).status_code == 200
        rooms[user] = (room["id"], name, secret)

    def trials() -> tuple[int, int]:
        mine = leaks = 0
        for user in users:
            for other, (cid, name, _) in rooms.items():
                for ref in (cid, name):
                    fake_llm.reset()
                    for body in ({"query": "leave", "room_id": ref}, {"query": "leave", "conversationId": cid}):
                        client.post(f"{API}/ai/rag", json=body, headers=as_user(user))
                    sent = json.dumps(fake_llm.messages())
                    own = rooms[user][2]
                    mine += own in sent if other == user else 0
                    leaks += sum(s in sent for u, (_, _, s) in rooms.items() if u != user)
        return mine, leaks

    mine, leaks = trials()
    assert leaks == 0 and mine == 2 * len(users)  # each user's own rooms do use their prompts
    real = ConversationStore._owned

    def anyones(session: Any, username: str, conversation_id: str, lock: bool = False) -> Any:
        row = session.get(Conversation, conversation_id)
        return row if row is not None else real(session, username, conversation_id, lock)

    monkeypatch.setattr(ConversationStore, "_owned", staticmethod(anyones))  # the owner check off
    assert trials()[1] > 0
