"""DatafariUI's session check, its user's saved language and layout, and its log-in link: Datafari's
JSON, owner-only, and working while the store is down where that is possible."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path

import jwt
import pytest
from flask import Flask
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.store.database import migrate, open_engine
from datafari_rag.store.preferences import PreferenceStore

SECRET = "a-test-secret-that-is-long-enough-for-hs256"
V1 = "/Datafari/rest/v1.0"


def signed(username: str) -> dict[str, str]:
    claims = {"preferred_username": username, "exp": int(time.time()) + 300}
    return {"Authorization": "Bearer " + jwt.encode(claims, SECRET, algorithm="HS256")}


def app_with(tmp_path: Path, **changes: object) -> Flask:
    settings = Settings(
        store_url=f"sqlite:///{tmp_path / 'store.db'}",
        jwt_hs256_secret=SECRET,
        admins="root",
    )
    return create_app(settings.replace(**changes))


@pytest.fixture
def client(tmp_path: Path) -> FlaskClient:
    return app_with(tmp_path).test_client()


def test_a_signed_in_user_is_logged_and_a_visitor_is_not(client: FlaskClient) -> None:
    ada = client.get("/Datafari/RefreshSession", headers=signed("ada")).get_json()
    assert (ada["code"], ada["status"], ada["user"], ada["isAdmin"]) == (0, "Logged", "ada", False)
    assert ada["samlEnabled"] is False and ada["oidcEnabled"] is False  # no identity provider's keys
    assert client.get("/Datafari/RefreshSession", headers=signed("root")).get_json()["isAdmin"] is True
    visitor = client.get("/Datafari/RefreshSession").get_json()
    assert (visitor["code"], visitor["status"]) == (-2, "Not logged") and "user" not in visitor


def test_without_anonymous_access_the_session_check_is_refused_like_any_request(tmp_path: Path) -> None:
    client = app_with(tmp_path, anonymous_allowed=False).test_client()
    refused = client.get("/Datafari/RefreshSession")
    assert refused.status_code == 401 and refused.get_json()["status"] == "ERROR"
    assert client.get("/Datafari/RefreshSession", headers=signed("ada")).get_json()["status"] == "Logged"


def test_the_language_a_user_chooses_is_theirs_after_a_reload(client: FlaskClient) -> None:
    english = {"Accept-Language": "en-GB,en;q=0.9", **signed("ada")}
    assert client.get(f"{V1}/users/current", headers=english).get_json()["content"]["lang"] == "en"
    saved = client.put(f"{V1}/users/current", json={"lang": "fr"}, headers=signed("ada"))
    assert saved.status_code == 200 and saved.get_json() == {"status": "OK", "content": {"lang": "fr", "uiConfig": {}}}
    again = client.get(f"{V1}/users/current", headers=english).get_json()["content"]
    assert again["lang"] == "fr" and again["name"] == "ada" and again["roles"] == []
    layout = {"direction": "ltr", "left": [{"type": "FieldFacet", "field": "extension"}]}
    assert client.put(f"{V1}/users/current", json={"uiConfig": layout}, headers=signed("ada")).status_code == 200
    both = client.get(f"{V1}/users/current", headers=signed("ada")).get_json()["content"]
    assert (both["lang"], both["uiConfig"]) == ("fr", layout)  # a layout change keeps the language
    assert client.get(f"{V1}/users/current", headers=signed("root")).get_json()["content"]["roles"] == [
        "SearchAdministrator"
    ]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"lang": "français"}, "'lang' does not have the expected form"),
        ({"lang": 7}, "'lang' is text."),
        ({"uiConfig": "left"}, "'uiConfig' is an object."),
        ({"lang": "fr", "user": "bob"}, "Unknown field(s): user."),
    ],
)
def test_a_bad_change_is_refused_in_datafari_v1_json_and_saves_nothing(
    client: FlaskClient, body: dict[str, object], said: str
) -> None:
    refused = client.put(f"{V1}/users/current", json=body, headers=signed("ada"))
    answer = refused.get_json()
    assert refused.status_code == 400 and answer["status"] == "ERROR" and answer["content"]["code"] == 400
    assert said in answer["content"]["reason"]
    assert client.get(f"{V1}/users/current", headers=signed("ada")).get_json()["content"]["lang"] == "en"


def test_a_visitor_has_no_preferences_to_save(client: FlaskClient) -> None:
    refused = client.put(f"{V1}/users/current", json={"lang": "fr"})
    assert refused.status_code == 401 and refused.get_json()["content"]["code"] == 401
    assert client.get(f"{V1}/users/current").status_code == 404


def mismatches(save: Callable[[str, str], None], read: Callable[[str], str | None], seed: int) -> int:
    """The leak harness: random users save random languages in interleaved rounds; how many then
    read back something other than their own last choice."""
    rng = random.Random(seed)
    chosen: dict[str, str] = {}
    for _ in range(3):
        for user in rng.sample([f"user{i}" for i in range(12)], 12):
            chosen[user] = rng.choice(["fr", "de", "it", "es", "pt_br", "en"])
            save(user, chosen[user])
    return sum(read(user) != lang for user, lang in chosen.items())


def test_random_users_each_read_back_only_what_they_saved(client: FlaskClient) -> None:
    def save(user: str, lang: str) -> None:
        assert client.put(f"{V1}/users/current", json={"lang": lang}, headers=signed(user)).status_code == 200

    def read(user: str) -> str | None:
        return str(client.get(f"{V1}/users/current", headers=signed(user)).get_json()["content"]["lang"])

    assert mismatches(save, read, seed=30) == 0


def test_the_harness_finds_the_leak_of_a_store_not_keyed_by_its_user(tmp_path: Path) -> None:
    """The control: the same harness on the store with the owner switched off (one row for
    everyone) finds users reading another's choice."""
    engine = open_engine(f"sqlite:///{tmp_path / 'control.db'}")
    migrate(engine)
    store = PreferenceStore(engine)
    found = mismatches(
        lambda user, lang: store.save("everyone", lang=lang), lambda user: store.get("everyone").lang, 30
    )
    assert found > 0
    assert mismatches(lambda user, lang: store.save(user, lang=lang), lambda user: store.get(user).lang, 30) == 0


def test_with_the_store_down_the_page_still_opens_and_a_save_says_why(tmp_path: Path) -> None:
    client = app_with(tmp_path, store_url="postgresql://datafari@127.0.0.1:9/none").test_client()
    current = client.get(f"{V1}/users/current", headers={"Accept-Language": "de", **signed("ada")})
    assert current.status_code == 200 and current.get_json()["content"]["lang"] == "de"
    refused = client.put(f"{V1}/users/current", json={"lang": "fr"}, headers=signed("ada"))
    assert refused.status_code == 503 and refused.get_json()["status"] == "ERROR"
    assert client.get("/Datafari/RefreshSession", headers=signed("root")).get_json()["isAdmin"] is True


def test_the_log_in_link_goes_to_the_configured_sign_in_page_only(tmp_path: Path) -> None:
    client = app_with(tmp_path).test_client()
    local = client.get(f"{V1}/auth?callback=https://elsewhere.example/steal")
    assert local.status_code == 302 and local.headers["Location"] == "/ui/"
    idp = app_with(tmp_path, login_url="https://idp.example/login").test_client()
    assert idp.get(f"{V1}/auth?callback=https://elsewhere.example/").headers["Location"] == "https://idp.example/login"


def test_preferences_are_kept_on_each_database(database_url: str) -> None:
    engine = open_engine(database_url)
    migrate(engine)
    store = PreferenceStore(engine)
    assert store.get("ada").lang is None
    store.save("ada", lang="fr")
    store.save("ada", ui_config={"direction": "rtl"})
    assert (store.get("ada").lang, store.get("ada").ui_config) == ("fr", {"direction": "rtl"})
    assert store.get("bob").lang is None
