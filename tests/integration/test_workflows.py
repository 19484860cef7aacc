"""Workflows and their API keys, and the run-time settings, on the real Solr: administrators
define them, a key runs its workflow as its user (that user's ACL filter on every search), the
default workflow is what ai/rag runs, and every refused request changes nothing."""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest
from flask.testing import FlaskClient
from sqlalchemy import text

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.registry import RETRIEVAL_MODES
from datafari_rag.solr import SolrClient
from datafari_rag.store.database import open_engine
from datafari_rag.testing.fake_llm import FakeLlm
from tests.integration.conftest import MEMO as BOARD_MEMO
from tests.integration.conftest import PASSWORD, signed_in_world

API = "/Datafari/rest/v2.0"
MEMO = BOARD_MEMO["id"]
QUESTION = {"query": "board pay memo salaries"}
TABLES = ("workflow", "api_key", "setting_override")


@pytest.fixture(scope="module")
def world(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    users = {"bea": False, "otto": False, "root": True}
    folder = tmp_path_factory.mktemp("workflows")
    return signed_in_world(solr, settings, folder, "workflows", users, update_users="root")


@pytest.fixture
def client(world: Settings, fake_llm_server: tuple[FakeLlm, str]) -> FlaskClient:
    return create_app(world.replace(llm_endpoint=fake_llm_server[1])).test_client()


def bearer(client: FlaskClient, username: str) -> dict[str, str]:
    body = client.post(f"{API}/auth/login", json={"username": username, "password": PASSWORD}).get_json()
    return {"Authorization": f"Bearer {body['content']['token']}"}


def rows(world: Settings) -> dict[str, int]:
    engine = open_engine(world.store_url)
    with engine.connect() as connection:
        return {t: connection.execute(text(f"SELECT count(*) FROM {t}")).scalar_one() for t in TABLES}


def new_workflow(client: FlaskClient, root: dict[str, str], **fields: Any) -> dict[str, Any]:
    body = {"name": f"wf {random.randrange(10**9)}", **fields}
    response = client.post(f"{API}/workflows", json=body, headers=root)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["content"]["workflow"]


def new_key(client: FlaskClient, root: dict[str, str], workflow_id: str, username: str) -> str:
    response = client.post(f"{API}/workflows/{workflow_id}/keys", json={"username": username}, headers=root)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["content"]["secret"]


def urls(response: Any) -> list[str]:
    body = response.get_json()
    assert body["status"] == "OK", body
    return [d["url"] for d in body["content"]["documents"]]


def test_a_workflow_is_saved_as_one_document_and_read_back_whole(client: FlaskClient, world: Settings) -> None:
    root = bearer(client, "root")
    before = rows(world)
    spec = {
        "retrieval": "rrf",
        "strategy": "cot",
        "parentChild": True,
        "instructions": "Answer as the support desk would.",
        "chunker": {"kind": "recursive", "maxChunkSize": 800, "overlap": 80},
        "queryEnhancers": [{"kind": "rewrite"}, {"kind": "multiQuery", "count": 2, "minVotes": 1}, {"kind": "hyde"}],
        "filters": {"extension": ["txt", "pdf"], "language": ["en"]},
        "ranker": {"kind": "api", "topN": 30, "url": "http://127.0.0.1:9/rerank", "apiKey": "s3cret-rerank-key"},
    }
    made = new_workflow(client, root, **spec)
    after = rows(world)
    added = {t: after[t] - before[t] for t in TABLES}
    assert added == {"workflow": 1, "api_key": 0, "setting_override": 0}
    with open_engine(world.store_url).connect() as connection:
        found = connection.execute(text("SELECT document FROM workflow WHERE id = :i"), {"i": made["id"]})
        document = found.scalar_one()
    stored = json.loads(document) if isinstance(document, str) else document
    assert stored["queryEnhancers"][1] == {"kind": "multiQuery", "count": 2, "minVotes": 1}
    assert "s3cret-rerank-key" not in json.dumps(stored)  # sealed
    read = client.get(f"{API}/workflows/{made['id']}", headers=root).get_json()["content"]["workflow"]
    assert read == made
    assert read["ranker"] == {"kind": "api", "topN": 30, "url": "http://127.0.0.1:9/rerank", "apiKey": True}
    assert read["chunker"]["maxChunkSize"] == 800 and read["filters"] == {
        "extension": ["txt", "pdf"],
        "language": ["en"],
    }
    assert "s3cret-rerank-key" not in client.get(f"{API}/workflows", headers=root).get_data(as_text=True)
    # saved again without the ranker's key: the stored one is kept; deleting takes every row
    again = client.put(
        f"{API}/workflows/{made['id']}",
        json={"name": made["name"], **spec, "ranker": {"kind": "api", "url": "http://127.0.0.1:9/rerank"}},
        headers=root,
    )
    assert again.get_json()["content"]["workflow"]["ranker"]["apiKey"] is True
    assert client.delete(f"{API}/workflows/{made['id']}", headers=root).status_code == 200
    assert rows(world) == before


def test_a_key_runs_its_workflow_as_its_user(client: FlaskClient, fake_llm: FakeLlm) -> None:
    root = bearer(client, "root")
    made = new_workflow(client, root, instructions="Sign every answer as The Support Desk.")
    path = f"{API}/workflows/{made['id']}/query"
    for user, sees in (("bea", True), ("otto", False)):
        key = new_key(client, root, made["id"], user)
        assert (MEMO in urls(client.post(path, json=QUESTION, headers={"X-API-Key": key}))) is sees, user
    assert "Sign every answer as The Support Desk." in fake_llm.messages()[-1][0]["content"]
    # ai/rag is not this workflow: its instructions are not in the default pipeline's prompt
    client.post(f"{API}/ai/rag", json=QUESTION, headers=bearer(client, "bea"))
    assert "Support Desk" not in fake_llm.messages()[-1][0]["content"]


def test_a_workflows_prompts_replace_the_packaged_ones_in_its_answers(client: FlaskClient, fake_llm: FakeLlm) -> None:
    root = bearer(client, "root")
    prompts = {"refine_initial": "You are The Support Desk's assistant. {{ abstention }}"}
    made = new_workflow(client, root, prompts=prompts)
    assert made["prompts"] == prompts
    key = new_key(client, root, made["id"], "bea")
    client.post(f"{API}/workflows/{made['id']}/query", json=QUESTION, headers={"X-API-Key": key})
    system = fake_llm.messages()[-1][0]["content"]
    assert system.startswith("You are The Support Desk's assistant. I could not find the answer")
    client.post(f"{API}/ai/rag", json=QUESTION, headers=bearer(client, "bea"))
    assert fake_llm.messages()[-1][0]["content"].startswith("Task: answer")  # not ai/rag's


def test_a_key_is_shown_once_works_for_its_workflow_only_and_stops_when_revoked(client: FlaskClient) -> None:
    root = bearer(client, "root")
    one, other = new_workflow(client, root), new_workflow(client, root)
    created = client.post(f"{API}/workflows/{one['id']}/keys", json={"name": "intranet"}, headers=root).get_json()
    secret, key = created["content"]["secret"], created["content"]["key"]
    assert secret.startswith("dfr_") and key["username"] == "root" and key["prefix"] == secret[:12]
    listed = client.get(f"{API}/workflows/{one['id']}/keys", headers=root).get_data(as_text=True)
    assert secret not in listed and key["id"] in listed
    ask = lambda wf, k: client.post(f"{API}/workflows/{wf}/query", json=QUESTION, headers={"X-API-Key": k})  # noqa: E731
    assert ask(one["id"], secret).status_code == 200
    for workflow, wrong in ((other["id"], secret), (one["id"], secret + "x"), (one["id"], "dfr_"), (one["id"], "")):
        refused = ask(workflow, wrong)
        assert refused.status_code == 401, (workflow, wrong)
        assert refused.get_json()["content"]["error"]["label"] == "authenticationFailed"
    revoked = client.delete(f"{API}/workflows/{one['id']}/keys/{key['id']}", headers=root).get_json()
    assert revoked["content"]["key"]["revoked_at"]
    assert ask(one["id"], secret).status_code == 401


def test_the_workflow_filters_narrow_what_its_answers_read(client: FlaskClient) -> None:
    root = bearer(client, "root")
    memo_only = new_workflow(client, root, filters={"id": [MEMO]})
    txt_only = new_workflow(client, root, filters={"extension": ["txt"]})  # the memo has no extension
    ask = lambda wf, body: client.post(  # noqa: E731
        f"{API}/workflows/{wf['id']}/query", json=body, headers={"X-API-Key": new_key(client, root, wf["id"], "bea")}
    )
    assert urls(ask(memo_only, QUESTION)) == [MEMO]
    found = urls(ask(txt_only, QUESTION))
    assert found and MEMO not in found
    # a request's own filters narrow the workflow's, never widen them
    refused = ask(txt_only, {**QUESTION, "filters": {"id": [MEMO]}}).get_json()
    assert refused["content"]["error"]["label"] == "ragNoFileFound"
    other = found[0]
    assert ask(memo_only, {**QUESTION, "filters": {"id": [other]}}).get_json()["content"]["error"]["label"] == (
        "ragNoFileFound"
    )


def test_the_default_workflow_is_what_ai_rag_runs(client: FlaskClient, fake_llm: FakeLlm) -> None:
    root, bea = bearer(client, "root"), bearer(client, "bea")
    made = new_workflow(client, root, instructions="Answer like a pirate.", default=True)
    client.post(f"{API}/ai/rag", json=QUESTION, headers=bea)
    assert "Answer like a pirate." in fake_llm.messages()[-1][0]["content"]
    second = new_workflow(client, root, instructions="Answer like a poet.", default=True)
    listed = client.get(f"{API}/workflows", headers=root).get_json()["content"]["workflows"]
    assert [w["id"] for w in listed if w["default"]] == [second["id"]]
    client.post(f"{API}/ai/rag", json=QUESTION, headers=bea)
    assert "Answer like a poet." in fake_llm.messages()[-1][0]["content"]
    for workflow in (made, second):
        client.delete(f"{API}/workflows/{workflow['id']}", headers=root)
    client.post(f"{API}/ai/rag", json=QUESTION, headers=bea)
    assert "Answer like a" not in fake_llm.messages()[-1][0]["content"]


def test_a_workflow_with_its_own_collections_indexes_and_answers_there_only(
    client: FlaskClient, solr: SolrClient, world: Settings
) -> None:
    root = bearer(client, "root")
    made = new_workflow(client, root, collection="wfown", instructions="Answer from the lab's notes.")
    assert made["collection"] == "wfown"
    listed = solr.get("admin/collections", {"action": "LIST"})["collections"]
    assert {"wfown_FileShare", "wfown_VectorMain"} <= set(listed)
    note = {"id": "lab-note", "title": "Lab note", "exactContent": "The centrifuge of the lab spins at 9000 rpm."}
    secret = {
        **note,
        "id": "lab-secret",
        "allow_token_document": ["board"],
        "exactContent": "The board's centrifuge budget.",
    }
    body = {"documents": [note, secret], "workflow": made["id"], "visibility": "public"}  # the note: everyone's
    job = client.post(f"{API}/index/jobs", json=body, headers=root).get_json()["content"]["job"]
    for _ in range(100):
        state = client.get(f"{API}/index/jobs/{job['id']}", headers=root).get_json()["content"]["job"]
        if state["status"] != "running":
            break
        time.sleep(0.2)
    assert state["status"] == "done" and state["documents"] == 2, state
    solr.get("wfown_FileShare/update", {"commit": "true"})
    solr.get("wfown_VectorMain/update", {"commit": "true"})
    assert solr.get(f"{world.collection_main}/internal", {"q": "id:lab-note", "rows": 0})["response"]["numFound"] == 0
    question = {"query": "centrifuge lab spins rpm budget"}
    path = f"{API}/workflows/{made['id']}/query"
    for user, expected in (("bea", {"lab-note", "lab-secret"}), ("otto", {"lab-note"})):
        headers = {"X-API-Key": new_key(client, root, made["id"], user)}
        found = {d["id"] for d in client.post(path, json=question, headers=headers).get_json()["content"]["documents"]}
        assert found == expected, (user, found)
    # ai/rag reads the configured collections: not the workflow's
    answer = client.post(f"{API}/ai/rag", json=question, headers=bearer(client, "bea")).get_json()
    assert "lab-note" not in str(answer)
    # one cannot be the default: ai/rag serves the configured collections
    refused = client.put(
        f"{API}/workflows/{made['id']}",
        json={"name": made["name"], "collection": "wfown", "default": True},
        headers=root,
    )
    assert refused.status_code == 400 and "cannot be the default" in refused.get_json()["content"]["error"]["reason"]


@pytest.mark.parametrize(
    ("body", "label", "says"),
    [
        ({"name": ""}, "workflowBadRequest", "'name'"),
        ({"name": "x", "retrieval": "magic"}, "workflowBadRequest", "'retrieval'"),
        ({"name": "x", "strategy": "guess"}, "workflowBadRequest", "'strategy'"),
        ({"name": "x", "parentChild": "yes"}, "workflowBadRequest", "'parentChild'"),
        ({"name": "x", "colour": "blue"}, "workflowBadRequest", "colour"),
        ({"name": "x", "filters": {"secret_field": ["a"]}}, "workflowBadRequest", "filters"),
        ({"name": "x", "queryEnhancers": [{"kind": "hyde"}, {"kind": "hyde"}]}, "workflowBadRequest", "twice"),
        ({"name": "x", "queryEnhancers": [{"kind": "multiQuery", "count": 9}]}, "workflowBadRequest", "at most 5"),
        ({"name": "x", "queryEnhancers": [{"kind": "selfQuery", "fields": ["acl"]}]}, "workflowBadRequest", "acl"),
        ({"name": "x", "chunker": {"maxChunkSize": 10}}, "workflowBadRequest", "maxChunkSize"),
        ({"name": "x", "chunker": {"overlap": 900}}, "workflowBadRequest", "'chunker.overlap'"),
        ({"name": "x", "ranker": {"kind": "onnx", "path": "/nowhere"}}, "workflowBadRequest", "cannot run"),
        ({"name": "x", "ranker": {"kind": "api"}}, "workflowBadRequest", "cannot run"),
        ({"name": "x", "instructions": "y" * 5000}, "workflowBadRequest", "'instructions'"),
        ({"name": "x", "prompts": {"map": "{{ secrets }}"}}, "workflowBadRequest", "'secrets' is undefined"),
        ({"name": "x", "prompts": {"rerank": "x"}}, "workflowBadRequest", "unknown prompt(s) rerank"),
        ({"name": "x", "prompts": "{}"}, "workflowBadRequest", "'prompts'"),
        ({"name": "x", "collection": "bad name"}, "workflowBadRequest", "'collection'"),
        ({"name": "x", "collection": "FileShare"}, "workflowBadRequest", "'collection'"),
        ({"name": "x", "collection": 3}, "workflowBadRequest", "'collection'"),
        (["not", "an", "object"], "workflowBadRequest", ""),
    ],
)
def test_bad_workflows_get_clear_errors_and_nothing_is_saved(
    client: FlaskClient, world: Settings, body: Any, label: str, says: str
) -> None:
    root = bearer(client, "root")
    before = rows(world)
    response = client.post(f"{API}/workflows", json=body, headers=root)
    error = response.get_json()["content"]["error"]
    assert response.status_code == 400 and error["label"] == label and says in error["reason"]
    assert rows(world) == before


def test_a_name_is_taken_once_and_an_unknown_workflow_is_not_found(client: FlaskClient, world: Settings) -> None:
    root = bearer(client, "root")
    made = new_workflow(client, root)
    taken = client.post(f"{API}/workflows", json={"name": made["name"]}, headers=root)
    assert taken.status_code == 409 and taken.get_json()["content"]["error"]["label"] == "workflowExists"
    missing = "00000000-0000-0000-0000-000000000000"
    for method, path in (("get", ""), ("put", ""), ("delete", ""), ("get", "/keys"), ("post", "/keys")):
        response = getattr(client, method)(f"{API}/workflows/{missing}{path}", json={"name": "n"}, headers=root)
        assert response.status_code == 404 and response.get_json()["content"]["error"]["label"] == "workflowNotFound"
    query = client.post(f"{API}/workflows/{missing}/query", json=QUESTION, headers=bearer(client, "bea"))
    assert query.get_json()["content"]["error"]["label"] == "workflowNotFound"


def test_administrators_alone_define_workflows(client: FlaskClient) -> None:
    otto = bearer(client, "otto")
    assert client.get(f"{API}/workflows").status_code == 401
    assert client.get(f"{API}/workflows", headers=otto).status_code == 403
    assert client.post(f"{API}/workflows", json={"name": "mine"}, headers=otto).status_code == 403
    made = new_workflow(client, bearer(client, "root"))
    assert client.post(f"{API}/workflows/{made['id']}/keys", json={}, headers=otto).status_code == 403
    # a signed-in user runs a workflow as themselves
    assert MEMO not in urls(client.post(f"{API}/workflows/{made['id']}/query", json=QUESTION, headers=otto))


def test_random_keys_and_users_never_read_beyond_their_tokens(client: FlaskClient) -> None:
    """Random questions through random workflows, by random keys (of bea, otto, revoked, of
    another workflow, made up) and signed-in users: the memo comes only to bea's identities."""
    rng = random.Random(19)
    root = bearer(client, "root")
    flows = [new_workflow(client, root, retrieval=rng.choice(RETRIEVAL_MODES.names)) for _ in range(3)]
    keys: list[tuple[str, str, str | None]] = []  # (workflow, key, who reads)
    for flow in flows:
        for user in ("bea", "otto"):
            keys.append((flow["id"], new_key(client, root, flow["id"], user), user))
    dead = new_key(client, root, flows[0]["id"], "bea")
    key_id = client.get(f"{API}/workflows/{flows[0]['id']}/keys", headers=root).get_json()["content"]["keys"][-1]["id"]
    client.delete(f"{API}/workflows/{flows[0]['id']}/keys/{key_id}", headers=root)
    keys += [(flows[0]["id"], dead, None), (flows[1]["id"], keys[0][1], None), (flows[2]["id"], "dfr_made-up", None)]
    seen = 0
    for _ in range(40):
        if rng.random() < 0.7:
            workflow, key, reader = rng.choice(keys)
            headers = {"X-API-Key": key}
        else:
            workflow, reader = rng.choice(flows)["id"], rng.choice(["bea", "otto"])
            headers = bearer(client, reader)
        response = client.post(f"{API}/workflows/{workflow}/query", json=QUESTION, headers=headers)
        body = response.get_data(as_text=True)
        if reader is None:
            assert response.status_code == 401, (workflow, key)
        if MEMO in body or "3 percent" in body:
            assert reader == "bea", (workflow, headers)
            seen += 1
    assert seen > 0


def test_settings_change_without_a_restart_and_secrets_are_never_shown(
    client: FlaskClient, world: Settings, fake_llm: FakeLlm
) -> None:
    root, bea = bearer(client, "root"), bearer(client, "bea")
    path = f"{API}/admin/settings"
    listed = client.get(path, headers=root).get_json()["content"]["settings"]
    by_key = {s["key"]: s for s in listed}
    assert "llm.model" in by_key and by_key["solr.url"]["live"] is False and by_key["prompt.instructions"]["live"]
    assert by_key["security.jwt.hs256.secret"] == {**by_key["security.jwt.hs256.secret"], "value": "", "set": True}
    assert world.jwt_hs256_secret not in client.get(path, headers=root).get_data(as_text=True)
    saved = client.put(path, json={"values": {"prompt.instructions": "Close with: Kind regards."}}, headers=root)
    assert saved.status_code == 200
    client.post(f"{API}/ai/rag", json=QUESTION, headers=bea)
    assert "Close with: Kind regards." in fake_llm.messages()[-1][0]["content"]
    # another worker (a new app on the same store) applies it too
    other = create_app(world.replace(llm_endpoint=client.application.extensions["live"].base.llm_endpoint))
    other.test_client().post(f"{API}/ai/rag", json=QUESTION, headers=bea)
    assert "Close with: Kind regards." in fake_llm.messages()[-1][0]["content"]
    client.put(path, json={"values": {"prompt.instructions": None}}, headers=root)
    client.post(f"{API}/ai/rag", json=QUESTION, headers=bea)
    assert "Kind regards" not in fake_llm.messages()[-1][0]["content"]


@pytest.mark.parametrize(
    ("values", "says"),
    [
        ({"no.such.key": "1"}, "names no setting"),
        ({"solr.url": "http://elsewhere:8983/solr"}, "read at start only"),
        ({"security.anonymous.allowed": "true"}, "read at start only"),
        ({"llm.temperature": "hot"}, "llm.temperature"),
        ({"chunking.maxFiles": -1}, "chunking.maxFiles"),
        ({"rerank.enabled": True, "rerank.backend": "onnx", "rerank.onnx.path": "/nowhere"}, "rerank"),
        ({"retrieval.filters": "{not json"}, "retrieval.filters"),
        ({"prompt.templates": '{"chat": "{{ query.__class__ }}"}'}, "unsafe"),
        ({"prompt.instructions": "ok", "llm.maxTokens": "many"}, "llm.maxTokens"),
        ({"llm.model": ["a", "list"]}, "llm.model"),
    ],
)
def test_bad_settings_are_refused_whole(client: FlaskClient, world: Settings, values: Any, says: str) -> None:
    root = bearer(client, "root")
    before = rows(world)
    response = client.put(f"{API}/admin/settings", json={"values": values}, headers=root)
    body = response.get_json()["content"]
    assert (
        response.status_code == 400
        and body["error"]["label"] == "settingsBadRequest"
        and says in body["error"]["reason"]
    )
    assert rows(world) == before


def test_administrators_alone_read_and_change_settings(client: FlaskClient) -> None:
    otto = bearer(client, "otto")
    assert client.get(f"{API}/admin/settings").status_code == 401
    assert client.get(f"{API}/admin/settings", headers=otto).status_code == 403
    changed = client.put(f"{API}/admin/settings", json={"values": {"llm.model": "x"}}, headers=otto)
    assert changed.status_code == 403


def test_random_users_never_read_a_secret_nor_change_settings(client: FlaskClient, world: Settings) -> None:
    """Random reads and changes of the settings by random users, anonymous included: only the
    administrator's succeed, and no answer ever holds a secret's value."""
    rng = random.Random(41)
    secrets_ = (world.jwt_hs256_secret, "a-token-nobody-may-read")
    root = bearer(client, "root")
    client.put(f"{API}/admin/settings", json={"values": {"ai.api.token": secrets_[1]}}, headers=root)
    who_headers = {"bea": bearer(client, "bea"), "otto": bearer(client, "otto"), "root": root, "anonymous": {}}
    allowed = 0
    for _ in range(30):
        who = rng.choice(list(who_headers))
        if rng.random() < 0.5:
            response = client.get(f"{API}/admin/settings", headers=who_headers[who])
        else:
            values = {rng.choice(["llm.model", "prompt.instructions"]): rng.choice(["x", None])}
            response = client.put(f"{API}/admin/settings", json={"values": values}, headers=who_headers[who])
        text_ = response.get_data(as_text=True)
        assert not any(s in text_ for s in secrets_), who
        if who == "root":
            assert response.status_code == 200
            allowed += 1
        else:
            assert response.status_code == (401 if who == "anonymous" else 403), (who, response.status_code)
    assert allowed > 3
    back = {"ai.api.token": None, "llm.model": None, "prompt.instructions": None}
    client.put(f"{API}/admin/settings", json={"values": back}, headers=root)


def test_an_endpoint_that_receives_a_secret_changes_only_with_its_secret(client: FlaskClient, world: Settings) -> None:
    """Else an administrator points ai.api.endpoint (or rerank.api.url) at their own server and
    reads the hidden token from the next call. The secret must come in the same change, and
    replaces the old one."""
    root, path = bearer(client, "root"), f"{API}/admin/settings"
    assert client.put(path, json={"values": {"ai.api.token": "the-old-token"}}, headers=root).status_code == 200
    try:
        for endpoint, secret in (("ai.api.endpoint", "ai.api.token"), ("rerank.api.url", "rerank.api.key")):
            refused = client.put(path, json={"values": {endpoint: "http://collector.example/v1"}}, headers=root)
            error = refused.get_json()["content"]["error"]
            assert refused.status_code == 400 and error["label"] == "settingsBadRequest" and secret in error["reason"]
            with_null = {endpoint: "http://collector.example/v1", secret: None}  # "back to the file's" is not one
            assert client.put(path, json={"values": with_null}, headers=root).status_code == 400
        moved = {"ai.api.endpoint": "http://collector.example/v1", "ai.api.token": ""}
        assert client.put(path, json={"values": moved}, headers=root).status_code == 200
        listed = {s["key"]: s for s in client.get(path, headers=root).get_json()["content"]["settings"]}
        assert listed["ai.api.token"]["set"] is False  # the old token is gone with the old address
        assert listed["ai.api.endpoint"]["receivesSecret"] == "ai.api.token"  # the page sends it along
        same = client.put(path, json={"values": {"ai.api.endpoint": "http://collector.example/v1"}}, headers=root)
        assert same.status_code == 200  # not a change of address
    finally:
        back = {"ai.api.endpoint": None, "ai.api.token": None}
        assert client.put(path, json={"values": back}, headers=root).status_code == 200
