"""Datafari 7.0's assistant endpoints (users/conversations, users/docsbasket, users/messages) on the
product's conversation store and the real Solr: each user's own, a foreign conversation 404, and
only documents the user may read in a basket."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.acl_harness import EVERY_TOKEN, layers_off
from tests.integration.conftest import mapped_users

API = "/Datafari/rest/v2.0/users"
HR = {"allow_token_document": ["team-hr"]}


@pytest.fixture(scope="module")
def setup(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> tuple[FlaskClient, Any]:
    folder: Path = tmp_path_factory.mktemp("assistant")
    users = {"hana": ["team-hr"], "otto": [], EVERY_TOKEN: ["team-hr"]} | {f"u{i}": [] for i in range(6)}
    mine = mapped_users(settings, folder, "ast", users).replace(store_url=f"sqlite:///{folder / 'store.db'}")
    bootstrap(solr, mine)
    docs = [
        {"id": "ast-public", "title": "Pump manual", "exactContent": "How to service the pump."},
        {"id": "ast-hr", "title": "Salaries", "exactContent": "The salaries of the team.", **HR},
        {"id": "ast-moving", "title": "Draft", "exactContent": "A draft note."},
    ]
    indexer = Indexer.of(solr, mine)
    assert all(r.status == "ok" for r in indexer.add(docs, commit=True))
    return create_app(mine).test_client(), (indexer, docs)


def call(client: FlaskClient, verb: str, path: str, user: str, status: int = 200, **kwargs: Any) -> Any:
    response = getattr(client, verb)(f"{API}/{path}", headers={"X-Remote-User": user}, **kwargs)
    assert response.status_code == status, response.get_data(as_text=True)
    body = response.get_json()
    assert body["status"] == ("OK" if status == 200 else "ERROR")
    return body["content"]


def test_messages_and_basket_make_a_conversation(setup: tuple[FlaskClient, Any]) -> None:
    client, _ = setup
    cid = call(client, "post", "messages", "hana", json={"role": "user", "content": "Who services the pump?"})[
        "conversationId"
    ]
    call(
        client,
        "post",
        "messages",
        "hana",
        json={"role": "assistant", "content": "The team does.", "conversationId": cid},
    )
    entry = call(client, "post", "docsbasket", "hana", json={"docId": "ast-hr", "docTitle": "Salaries"})["id"]
    again = call(client, "post", "docsbasket", "hana", json={"docId": "ast-hr", "docTitle": "Salaries"})["id"]
    assert again == entry  # once per conversation
    view = call(client, "get", f"conversations?conversationId={cid}", "hana")
    assert view["conversationId"] == cid and view["title"] == "Who services the pump?"
    assert [(m["role"], m["content"]) for m in view["messages"]] == [
        ("user", "Who services the pump?"),
        ("assistant", "The team does."),
    ]
    assert [(d["document_id"], d["document_title"]) for d in view["docsBasket"]] == [("ast-hr", "Salaries")]
    assert call(client, "get", "docsbasket", "hana")["docsbasket"][0]["id"] == entry
    renamed = call(client, "put", "conversations", "hana", json={"conversationId": cid, "title": " Pump  service "})
    assert renamed == {"conversationId": cid, "title": "Pump service"}
    copy = call(client, "post", "conversations", "hana", json={"sourceConversationId": cid})
    assert copy["title"] == "New conversation" and copy["docsBasket"][0]["document_id"] == "ast-hr"
    assert copy["conversationId"] != cid and len(copy["conversations"]) == 2
    after = call(client, "delete", f"docsbasket?id={copy['docsBasket'][0]['id']}", "hana")
    assert after == {"docsbasket": []}
    remaining = call(client, "delete", f"conversations?conversationId={copy['conversationId']}", "hana")
    assert [c["id"] for c in remaining["conversations"]] == [cid]


def test_another_users_conversation_is_not_found_and_left_alone(setup: tuple[FlaskClient, Any]) -> None:
    client, _ = setup
    cid = call(client, "post", "messages", "hana", json={"role": "user", "content": "A private question"})[
        "conversationId"
    ]
    entry = call(
        client, "post", "docsbasket", "hana", json={"docId": "ast-public", "docTitle": "Pump", "conversationId": cid}
    )["id"]
    for verb, path, kwargs in [
        ("get", f"conversations?conversationId={cid}", {}),
        ("put", "conversations", {"json": {"conversationId": cid, "title": "mine now"}}),
        ("delete", f"conversations?conversationId={cid}", {}),
        ("delete", f"docsbasket?id={entry}", {}),
        ("post", "messages", {"json": {"role": "user", "content": "hi", "conversationId": cid}}),
        ("post", "docsbasket", {"json": {"docId": "ast-public", "docTitle": "x", "conversationId": cid}}),
        ("post", "conversations", {"json": {"sourceConversationId": cid}}),
    ]:
        refused = call(client, verb, path, "otto", 404, **kwargs)
        assert refused["code"] == 404, (verb, path)
    mine = call(client, "get", f"conversations?conversationId={cid}", "hana")
    assert mine["title"] == "A private question" and [d["id"] for d in mine["docsBasket"]] == [entry]
    assert all(c["id"] != cid for c in call(client, "get", "conversations", "otto")["conversations"])


def test_a_basket_holds_only_documents_the_user_may_read(
    setup: tuple[FlaskClient, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, (indexer, docs) = setup
    refused = call(client, "post", "docsbasket", "otto", 404, json={"docId": "ast-hr", "docTitle": "Salaries"})
    assert refused["code"] == 404
    assert call(client, "post", "docsbasket", "otto", 404, json={"docId": "no-such", "docTitle": "x"}) == refused
    call(client, "post", "docsbasket", "otto", json={"docId": "ast-moving", "docTitle": "Draft"})
    assert [d["document_id"] for d in call(client, "get", "docsbasket", "otto")["docsbasket"]] == ["ast-moving"]
    indexer.add([{**docs[2], **HR}], commit=True)  # the draft becomes the team's: otto loses it
    try:
        assert call(client, "get", "docsbasket", "otto")["docsbasket"] == []
    finally:
        indexer.add([docs[2]], commit=True)
    # the control: with both filters off, the same check lets otto put the team's document in
    monkeypatch.setattr("datafari_rag.solr.search.acl_params", layers_off("both"))
    call(client, "post", "docsbasket", "otto", json={"docId": "ast-hr", "docTitle": "Salaries"})


def test_random_users_never_reach_each_others_conversations(setup: tuple[FlaskClient, Any]) -> None:
    client, _ = setup
    rng = random.Random(9)
    users = [f"u{i}" for i in range(6)]
    owned: dict[str, str] = {}
    for user in users:
        owned[
            call(client, "post", "messages", user, json={"role": "user", "content": f"question of {user}"})[
                "conversationId"
            ]
        ] = user
    reached = []
    for _ in range(40):
        user, cid = rng.choice(users), rng.choice(list(owned))
        response = client.get(
            f"{API}/conversations", query_string={"conversationId": cid}, headers={"X-Remote-User": user}
        )
        if owned[cid] != user and response.status_code != 404:
            reached.append((user, cid))
        if owned[cid] == user:
            assert response.get_json()["content"]["messages"][0]["content"] == f"question of {user}"
    assert reached == []
    for user in users:
        listed = {c["id"] for c in call(client, "get", "conversations", user)["conversations"]}
        assert listed == {cid for cid, owner in owned.items() if owner == user}
