"""DatafariUI's saved searches and alerts over Datafari's v1.0 REST: each user's own, in Datafari's
JSON. An alert's search is judged by Solr's door when it is saved: those tests run on the real Solr
(tests/integration/test_saved_alerts.py)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jwt
import pytest
from flask.testing import FlaskClient

from datafari_rag.alerts.store import Alerts, SavedSearches
from datafari_rag.app import create_app, schedule_alerts
from datafari_rag.config import Settings
from datafari_rag.store.database import migrate, open_engine

SECRET = "a-test-secret-that-is-long-enough-for-hs256"
SAVED = "/Datafari/rest/v1.0/users/current/savedsearches"
ALERTS = "/Datafari/rest/v1.0/users/current/alerts"
ALERT = {
    "subject": "New pump reports",
    "keyword": "pump",
    "filters": '(author:"alice" OR author:"bob")&{!tag=date_1}last_modified:[NOW/DAY-30DAY TO NOW/DAY]',
    "core": "FileShare",
    "mail": "ada@example.org",
    "frequency": "daily",
}


def signed(username: str) -> dict[str, str]:
    claims = {"preferred_username": username, "exp": int(time.time()) + 300}
    return {"Authorization": "Bearer " + jwt.encode(claims, SECRET, algorithm="HS256")}


@pytest.fixture
def client(tmp_path: Path) -> FlaskClient:
    settings = Settings(store_url=f"sqlite:///{tmp_path / 'store.db'}", jwt_hs256_secret=SECRET)
    return create_app(settings).test_client()


def content(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.get_data(as_text=True)
    body = response.get_json()
    assert body["status"] == ("OK" if status == 200 else "ERROR")
    return body["content"]


def test_a_search_is_saved_listed_and_deleted_by_its_user(client: FlaskClient) -> None:
    search = "q=pump&fq=%7B!tag%3Dauthor%7D(author%3A%22alice%22)&sort=score%20desc"
    saved = content(client.post(SAVED, json={"name": "Pumps", "search": search}, headers=signed("ada")))
    assert saved == {"savedsearch": {"name": "Pumps", "search": search}}
    assert content(client.get(SAVED, headers=signed("ada"))) == {"savedsearches": [{"name": "Pumps", "search": search}]}
    again = content(client.post(SAVED, json={"name": "Pumps", "search": "q=x"}, headers=signed("ada")), 409)
    assert again["code"] == 409 and "already named" in again["reason"]
    assert content(client.get(SAVED, headers=signed("bob"))) == {"savedsearches": []}
    assert content(client.delete(f"{SAVED}/Pumps", headers=signed("bob")), 404)["code"] == 404  # not bob's
    assert content(client.delete(f"{SAVED}/Pumps", headers=signed("ada"))) == {"deleted": "Pumps"}
    assert content(client.get(SAVED, headers=signed("ada"))) == {"savedsearches": []}


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"search": "q=x"}, "'name' is required."),
        ({"name": "a/b", "search": "q=x"}, "'name' does not have the expected form"),
        ({"name": "x", "search": "q=x", "owner": "bob"}, "Unknown field(s): owner."),
    ],
)
def test_a_bad_saved_search_is_refused_and_nothing_is_saved(client: FlaskClient, body: Any, said: str) -> None:
    refused = content(client.post(SAVED, json=body, headers=signed("ada")), 400)
    assert said in refused["reason"]
    assert content(client.get(SAVED, headers=signed("ada"))) == {"savedsearches": []}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"frequency": "monthly"}, "'frequency' is one of"),
        ({"core": "VectorMain"}, "'core' is one of"),
        ({"mail": "not an address"}, "'mail' does not have the expected form"),
    ],
)
def test_an_alert_of_a_bad_form_is_refused_before_its_search_runs(client: FlaskClient, change: Any, said: str) -> None:
    """The alert's own fields; its search is judged by Solr's door (tests/integration/test_saved_alerts.py)."""
    refused = content(client.post(ALERTS, json={**ALERT, **change}, headers=signed("ada")), 400)
    assert said in refused["reason"]
    assert content(client.get(ALERTS, headers=signed("ada"))) == {"alerts": []}


def test_a_visitor_has_no_saved_searches_or_alerts(client: FlaskClient) -> None:
    assert content(client.get(SAVED), 401)["code"] == 401
    assert content(client.post(ALERTS, json=ALERT), 401)["code"] == 401


def mismatches(add: Callable[[str, str], None], listed: Callable[[str], set[str]], seed: int) -> int:
    """The leak harness: random users save random names; how many then list a name not theirs."""
    rng = random.Random(seed)
    mine: dict[str, set[str]] = {f"user{i}": set() for i in range(8)}
    for n in range(40):
        user = rng.choice(sorted(mine))
        name = f"search {n}"
        add(user, name)
        mine[user].add(name)
    return sum(len(listed(user) ^ names) for user, names in mine.items())


def test_the_control_a_store_read_without_its_owner_is_caught(tmp_path: Path) -> None:
    engine = open_engine(f"sqlite:///{tmp_path / 'control.db'}")
    migrate(engine)
    saved, alerts = SavedSearches(engine), Alerts(engine)
    assert alerts.of_user("nobody") == []

    def every_users(user: str) -> set[str]:  # the owner filter switched off: everyone's rows
        return {s["name"] for u in (f"user{i}" for i in range(8)) for s in saved.of_user(u)}

    assert mismatches(lambda user, name: saved.add(user, name, "q=x"), every_users, seed=3) > 0


def test_the_alert_schedule_starts_for_the_sidecar_only(tmp_path: Path) -> None:
    """gunicorn's hook runs for any app served with the sidecar's settings (bench/bare_hop.py
    too): only the sidecar's starts the schedule, and not with an interval of 0."""
    assert schedule_alerts(lambda environ, start_response: []) is None
    off = Settings(store_url=f"sqlite:///{tmp_path / 'off.db'}", alerts_interval=0)
    assert schedule_alerts(create_app(off)) is None
    on = create_app(Settings(store_url=f"sqlite:///{tmp_path / 'on.db'}", alerts_interval=3600))
    thread = schedule_alerts(on)
    assert thread is not None and thread.daemon and thread.is_alive()
