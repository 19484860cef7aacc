"""Local users over REST on the real Solr: sign-in gives a token the ACL path accepts like any
identity, administrators alone manage accounts, and nothing ever shows a password or its hash."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient
from datafari_rag.testing.fake_llm import FakeLlm
from tests.integration.conftest import MEMO as BOARD_MEMO
from tests.integration.conftest import PASSWORD, signed_in_world

API = "/Datafari/rest/v2.0"
MEMO = BOARD_MEMO["id"]


@pytest.fixture(scope="module")
def users_settings(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    # the mapping file gives bea the board's token
    users = {"bea": False, "otto": False, "root": True}
    return signed_in_world(solr, settings, tmp_path_factory.mktemp("users"), "users", users, sample=False)


@pytest.fixture
def client(users_settings: Settings, fake_llm_server: tuple[FakeLlm, str]) -> FlaskClient:
    return create_app(users_settings.replace(llm_endpoint=fake_llm_server[1])).test_client()


def login(client: FlaskClient, username: Any, password: Any) -> tuple[int, dict[str, Any]]:
    response = client.post(f"{API}/auth/login", json={"username": username, "password": password})
    return response.status_code, response.get_json()


def bearer(client: FlaskClient, username: str) -> dict[str, str]:
    status, body = login(client, username, PASSWORD)
    assert status == 200, body
    return {"Authorization": f"Bearer {body['content']['token']}"}


def test_a_local_user_signs_in_and_reads_what_their_tokens_allow(client: FlaskClient, fake_llm: FakeLlm) -> None:
    status, body = login(client, "bea", PASSWORD)
    assert status == 200 and body["content"]["token_type"] == "Bearer" and body["content"]["expires_in"] == 3600
    assert body["content"]["user"]["username"] == "bea" and body["content"]["user"]["admin"] is False
    for user, sees in (("bea", True), ("otto", False)):
        answer = client.post(f"{API}/ai/rag", json={"query": "board pay memo salaries"}, headers=bearer(client, user))
        urls = [d["url"] for d in answer.get_json()["content"]["documents"]]
        assert (MEMO in urls) is sees, (user, answer.get_json())


@pytest.mark.parametrize(
    ("username", "password"),
    [("bea", "wrong password!!"), ("nobody", PASSWORD), ("", ""), (None, None), (["bea"], {"p": 1})],
)
def test_a_wrong_password_and_an_unknown_user_get_the_same_answer(
    client: FlaskClient, username: Any, password: Any
) -> None:
    status, body = login(client, username, password)
    assert status == 401 and body["status"] == "ERROR"
    assert body["content"]["error"]["label"] == "loginFailed" and "token" not in str(body)


def test_sign_in_needs_a_signing_secret(users_settings: Settings) -> None:
    client = create_app(users_settings.replace(jwt_hs256_secret="")).test_client()
    status, body = login(client, "bea", PASSWORD)
    assert status == 422 and body["content"]["error"]["label"] == "loginNotEnabled"


def test_administrators_alone_manage_users(client: FlaskClient) -> None:
    root, otto = bearer(client, "root"), bearer(client, "otto")
    assert client.get(f"{API}/users").status_code == 401  # anonymous
    assert client.get(f"{API}/users", headers=otto).status_code == 403
    assert client.post(f"{API}/users", json={"username": "eve", "password": PASSWORD}, headers=otto).status_code == 403
    created = client.post(f"{API}/users", json={"username": "carl", "password": PASSWORD}, headers=root)
    assert created.status_code == 201 and created.get_json()["content"]["user"]["username"] == "carl"
    listed = client.get(f"{API}/users", headers=root).get_json()["content"]["users"]
    assert {u["username"] for u in listed} >= {"bea", "otto", "root", "carl"}
    assert set(listed[0]) == {"username", "admin", "created_at", "updated_at"}
    promoted = client.put(f"{API}/users/carl", json={"admin": True}, headers=root)
    assert promoted.get_json()["content"]["user"]["admin"] is True
    assert client.get(f"{API}/users", headers=bearer(client, "carl")).status_code == 200
    assert client.delete(f"{API}/users/carl", headers=root).get_json()["content"] == {"deleted": "carl"}
    assert login(client, "carl", PASSWORD)[0] == 401


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "label"),
    [
        ("post", "/users", {"username": "bad name", "password": PASSWORD}, 400, "userBadRequest"),
        ("post", "/users", {"username": "dan", "password": "short"}, 400, "userBadRequest"),
        ("post", "/users", {"username": "dan", "password": PASSWORD, "admin": "yes"}, 400, "userBadRequest"),
        ("post", "/users", {"username": "dan", "password": PASSWORD, "role": "x"}, 400, "userBadRequest"),
        ("post", "/users", {"username": "bea", "password": PASSWORD}, 409, "userExists"),
        ("post", "/users", ["not", "an", "object"], 400, "userBadRequest"),
        ("put", "/users/nobody", {"password": PASSWORD}, 404, "userNotFound"),
        ("put", "/users/bea", {}, 400, "userBadRequest"),
        ("put", "/users/root", {"admin": False}, 400, "userBadRequest"),
        ("delete", "/users/root", None, 400, "userBadRequest"),
        ("delete", "/users/nobody", None, 404, "userNotFound"),
    ],
)
def test_bad_user_requests_get_clear_errors_and_change_nothing(
    client: FlaskClient, method: str, path: str, body: Any, status: int, label: str
) -> None:
    root = bearer(client, "root")
    before = client.get(f"{API}/users", headers=root).get_json()["content"]["users"]
    response = getattr(client, method)(f"{API}{path}", json=body, headers=root)
    assert response.status_code == status and response.get_json()["content"]["error"]["label"] == label
    assert response.get_json()["content"]["message"]
    assert client.get(f"{API}/users", headers=root).get_json()["content"]["users"] == before


def test_random_users_never_see_a_password_or_a_hash_nor_manage_accounts(client: FlaskClient) -> None:
    """Random requests by random signed-in users (and anonymous ones) on every user endpoint:
    only administrators' succeed, and no answer ever holds a password or an argon2 hash."""
    rng = random.Random(7)
    headers: dict[str, Callable[[], dict[str, str]]] = {
        name: (lambda n=name: bearer(client, n)) for name in ("bea", "otto", "root")
    }
    headers["anonymous"] = dict
    allowed = 0
    for i in range(60):
        who = rng.choice(list(headers))
        name = f"rnd{i}"
        method, path, body = rng.choice(
            [
                ("get", "/users", None),
                ("post", "/users", {"username": name, "password": PASSWORD}),
                ("put", f"/users/{rng.choice(['bea', 'otto'])}", {"password": PASSWORD}),
                ("delete", f"/users/rnd{rng.randrange(max(i, 1))}", None),
            ]
        )
        response = getattr(client, method)(f"{API}{path}", json=body, headers=headers[who]())
        text = response.get_data(as_text=True)
        assert PASSWORD not in text and "$argon2" not in text and "password_hash" not in text
        if who != "root":
            assert response.status_code in (401, 403), (who, method, path, response.status_code)
        else:
            allowed += response.status_code < 300
    assert allowed > 5


def test_a_username_of_security_admins_manages_users_whatever_signed_it_in(
    users_settings: Settings, fake_llm_server: tuple[FakeLlm, str]
) -> None:
    client = create_app(users_settings.replace(admins="bea")).test_client()
    assert client.get(f"{API}/users", headers=bearer(client, "bea")).status_code == 200
    assert client.get(f"{API}/users", headers={"X-Remote-User": "bea"}).status_code == 200  # the trusted header
    assert client.get(f"{API}/users", headers={"X-Remote-User": "otto"}).status_code == 403


def test_a_token_dies_with_its_password_its_role_and_its_account(client: FlaskClient) -> None:
    """A token signed at sign-in holds only while its account keeps the same password and role:
    a stolen token is not good until it expires once the password is changed, nor after the
    account is removed (the REST API and /mcp alike)."""
    root = bearer(client, "root")
    made = client.post(f"{API}/users", json={"username": "tess", "password": PASSWORD}, headers=root)
    assert made.status_code == 201, made.get_json()
    mcp = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    try:
        first = bearer(client, "tess")
        assert client.get(f"{API}/search/select", query_string={"q": "x"}, headers=first).status_code == 200
        new_password = PASSWORD + "-new"
        changed = client.put(f"{API}/users/tess", json={"password": new_password}, headers=root)
        assert changed.status_code == 200
        for call in (
            lambda h: client.get(f"{API}/search/select", query_string={"q": "x"}, headers=h),
            lambda h: client.post("/mcp", json=mcp, headers={**h, "Accept": "application/json, text/event-stream"}),
        ):
            refused = call(first)
            assert (
                refused.status_code == 401 and refused.get_json()["content"]["error"]["label"] == "authenticationFailed"
            )
        _, body = login(client, "tess", new_password)
        second = {"Authorization": f"Bearer {body['content']['token']}"}
        assert client.get(f"{API}/search/select", query_string={"q": "x"}, headers=second).status_code == 200
        # a role given or taken revokes too
        assert client.put(f"{API}/users/tess", json={"admin": True}, headers=root).status_code == 200
        assert client.get(f"{API}/search/select", query_string={"q": "x"}, headers=second).status_code == 401
        _, body = login(client, "tess", new_password)
        third = {"Authorization": f"Bearer {body['content']['token']}"}
    finally:
        assert client.delete(f"{API}/users/tess", headers=root).status_code in (200, 204)
    assert client.get(f"{API}/search/select", query_string={"q": "x"}, headers=third).status_code == 401


def test_sign_in_is_throttled_per_username_the_right_password_too(users_settings: Settings) -> None:
    """Past users.signIn.maxFailures refused sign-ins of one name, every sign-in of it waits
    (429, Retry-After) whatever the address — the right password too — until the window has
    passed; other names are not held; a success then clears the count."""
    client = create_app(users_settings.replace(sign_in_max_failures=3, sign_in_window=4)).test_client()
    root = bearer(client, "root")
    assert client.post(f"{API}/users", json={"username": "tara", "password": PASSWORD}, headers=root).status_code == 201
    try:
        for i in range(3):
            address = {"REMOTE_ADDR": f"10.9.0.{i}"}  # spread over addresses: the name is still counted
            wrong = client.post(
                f"{API}/auth/login", json={"username": "tara", "password": "x" * 12}, environ_base=address
            )
            assert wrong.status_code == 401
        held = client.post(f"{API}/auth/login", json={"username": "TARA", "password": PASSWORD})
        body = held.get_json()
        assert held.status_code == 429 and body["content"]["error"]["label"] == "loginThrottled", body
        assert 1 <= int(held.headers["Retry-After"]) <= 4 and "token" not in str(body)
        assert login(client, "bea", PASSWORD)[0] == 200  # another name signs in meanwhile
        time.sleep(int(held.headers["Retry-After"]) + 0.2)
        assert login(client, "tara", PASSWORD)[0] == 200
        # the success cleared tara's count: one more failure does not hold the name
        assert login(client, "tara", "y" * 12)[0] == 401 and login(client, "tara", PASSWORD)[0] == 200
    finally:
        client.delete(f"{API}/users/tara", headers=root)


def test_sign_in_is_throttled_per_address_across_usernames(users_settings: Settings) -> None:
    """One address trying many names is held after users.signIn.maxFailuresPerAddress failures,
    for every name (the right password too); another address is not."""
    client = create_app(users_settings.replace(sign_in_max_failures_per_address=4)).test_client()
    spray = {"REMOTE_ADDR": "10.8.0.1"}
    for name in ("amy", "ben", "cal", "dot"):
        response = client.post(f"{API}/auth/login", json={"username": name, "password": "z" * 12}, environ_base=spray)
        assert response.status_code == 401
    held = client.post(f"{API}/auth/login", json={"username": "bea", "password": PASSWORD}, environ_base=spray)
    assert held.status_code == 429 and int(held.headers["Retry-After"]) > 0
    other = client.post(
        f"{API}/auth/login", json={"username": "bea", "password": PASSWORD}, environ_base={"REMOTE_ADDR": "10.8.0.2"}
    )
    assert other.status_code == 200


def test_a_page_of_another_site_cannot_change_anything_as_the_visitor(users_settings: Settings) -> None:
    """Behind a proxy that names its signed-in visitor in the trusted header, a page elsewhere
    posting to the API would act as that visitor: a state-changing request whose Origin is not
    this service's (nor of server.allowedOrigins) is refused (403) before it runs — sign-in and
    /mcp included — and nothing is changed; reads and clients without Origin are not concerned."""
    evil, ui = "https://evil.example", "https://search.example"
    client = create_app(users_settings.replace(allowed_origins=ui)).test_client()
    bea = {"X-Remote-User": "bea"}

    def mine() -> list[str]:
        return [c["id"] for c in client.get(f"{API}/conversations", headers=bea).get_json()["content"]["conversations"]]

    before = mine()
    for path, body in (
        (f"{API}/conversations", {"title": "forged"}),
        (f"{API}/auth/login", {"username": "bea", "password": PASSWORD}),
    ):
        refused = client.post(path, json=body, headers={**bea, "Origin": evil})
        assert refused.status_code == 403 and refused.get_json()["content"]["error"]["label"] == "accessForbidden"
        assert "server.allowedOrigins" in refused.get_json()["content"]["error"]["reason"]
    mcp = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream"}
    assert client.post("/mcp", json=mcp, headers={**bea, **accept, "Origin": evil}).status_code == 403
    assert mine() == before
    assert client.get(f"{API}/conversations", headers={**bea, "Origin": evil}).status_code == 200  # a read
    made = []
    for origin in (None, "http://localhost", ui):  # no browser, the service's own page, the allowed UI
        headers = {**bea, **({"Origin": origin} if origin else {})}
        created = client.post(f"{API}/conversations", json={"title": "mine"}, headers=headers)
        assert created.status_code == 201, (origin, created.get_json())
        made.append(created.get_json()["content"]["conversation"]["id"])
    assert client.post("/mcp", json=mcp, headers={**bea, **accept, "Origin": ui}).status_code == 200
    assert sorted(mine()) == sorted(before + made)
    for conversation in made:
        client.delete(f"{API}/conversations/{conversation}", headers=bea)
