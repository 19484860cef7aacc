"""An alert's search is its user's, judged by Solr's door when the alert is saved (the same rule as
the search page's and a direct Solr client's); alerts are each user's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr.bootstrap import BootstrapReport
from tests.test_saved_searches import ALERT, ALERTS, SAVED, SECRET, content, mismatches, signed


@pytest.fixture
def client(settings: Settings, bootstrapped: BootstrapReport, tmp_path: Path) -> FlaskClient:
    mine = settings.replace(store_url=f"sqlite:///{tmp_path / 'store.db'}", jwt_hs256_secret=SECRET)
    return create_app(mine).test_client()


def test_an_alert_is_created_read_changed_and_deleted_by_its_user(client: FlaskClient) -> None:
    made = content(client.post(ALERTS, json=ALERT, headers=signed("ada")))["alert"]
    assert {k: made[k] for k in ALERT} == ALERT and made["user"] == "ada" and made["lastRun"] is None
    alert_id = made["_id"]
    listed = content(client.get(ALERTS, headers=signed("ada")))["alerts"]
    assert [a["_id"] for a in listed] == [alert_id]
    # DatafariUI sends back what it read, _id and user included: the URL names the alert, the identity its owner
    changed = {**made, "frequency": "weekly", "user": "bob"}
    after = content(client.put(f"{ALERTS}/{alert_id}", json=changed, headers=signed("ada")))["alert"]
    assert after["frequency"] == "weekly" and after["user"] == "ada"
    assert content(client.get(f"{ALERTS}/{alert_id}/runs", headers=signed("ada"))) == {"runs": []}
    for verb in ("get", "put", "delete"):  # another user's alert is not found, and stays as it is
        answer = getattr(client, verb)(f"{ALERTS}/{alert_id}", json=ALERT, headers=signed("bob"))
        assert content(answer, 404)["code"] == 404
    assert content(client.get(ALERTS, headers=signed("bob"))) == {"alerts": []}
    assert content(client.delete(f"{ALERTS}/{alert_id}", headers=signed("ada"))) == {"deleted": alert_id}
    assert content(client.get(ALERTS, headers=signed("ada"))) == {"alerts": []}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"keyword": "pump~2"}, "fuzzy"),
        ({"keyword": "allow_token_document:*"}, "access-control field"),
        ({"filters": "\\u0061llow_token_document:*"}, "access-control field"),
        ({"filters": "{!join from=x to=y}id:*"}, "'fq' accepts only the local parameters tag"),
        ({"filters": '\\u005fquery_:"{!join from=language to=language}id:*"'}, "'fq' may not hold nested queries"),
        ({"filters": "${m}"}, "macro"),
    ],
)
def test_an_alert_whose_search_the_door_refuses_is_not_saved(client: FlaskClient, change: Any, said: str) -> None:
    refused = content(client.post(ALERTS, json={**ALERT, **change}, headers=signed("ada")), 400)
    assert said in refused["reason"]
    assert content(client.get(ALERTS, headers=signed("ada"))) == {"alerts": []}


def test_random_users_list_only_their_own_saved_searches_and_alerts(client: FlaskClient) -> None:
    def add_both(user: str, name: str) -> None:
        content(client.post(SAVED, json={"name": name, "search": f"q={name}"}, headers=signed(user)))
        content(client.post(ALERTS, json={**ALERT, "subject": name}, headers=signed(user)))

    def listed(user: str) -> set[str]:
        searches = {s["name"] for s in content(client.get(SAVED, headers=signed(user)))["savedsearches"]}
        alerts = {a["subject"] for a in content(client.get(ALERTS, headers=signed(user)))["alerts"]}
        assert searches == alerts
        return searches

    assert mismatches(add_both, listed, seed=3) == 0
