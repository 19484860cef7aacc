"""DatafariUI's alerts run on the real Solr as their user: only the documents new since the
previous run, only those the user may read, recorded, and mailed when an SMTP server is set."""

from __future__ import annotations

import json
import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from datafari_rag.alerts.runner import run_due
from datafari_rag.alerts.store import Alerts, AlertSpec
from datafari_rag.app import create_app, schedule_alerts
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.solr.collection import Collection
from datafari_rag.store.database import migrate, open_engine
from datafari_rag.testing.acl_harness import EVERY_TOKEN, POOL, layers_off, random_acl, reference_allows
from datafari_rag.testing.smtp_sink import smtp_sink

DAY = timedelta(days=1)


class World:
    def __init__(self, rng: random.Random) -> None:
        self.users = {f"user{i}": frozenset(rng.sample(POOL, rng.randint(0, 4))) for i in range(10)}
        self.users["hana"] = frozenset({"team-hr"})
        self.docs = {
            f"alr-{i}": {
                "id": f"alr-{i}",
                "title": f"Gasket report {i}",
                "url": f"file://alerts/{i}",
                "exactContent": f"The gasket of pump {i} was replaced.",
                **random_acl(rng),
            }
            for i in range(30)
        }
        self.docs["alr-hr"] = {
            "id": "alr-hr",
            "title": "Gasket budget",
            "url": "file://alerts/hr",
            "exactContent": "The gasket budget of the team.",
            "allow_token_document": ["team-hr"],
        }


@pytest.fixture(scope="module")
def world(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, World]:
    folder: Path = tmp_path_factory.mktemp("alerts")
    world = World(random.Random(41))
    users = {u: sorted(t) for u, t in world.users.items()} | {EVERY_TOKEN: sorted({*POOL, "team-hr"})}
    (folder / "mapping.json").write_text(json.dumps({"users": users}))
    mine = settings.replace(
        collection_main="alr_FileShare",
        collection_vector="alr_VectorMain",
        mapping_file=str(folder / "mapping.json"),
        store_url=f"sqlite:///{folder / 'store.db'}",
    )
    bootstrap(solr, mine)
    return mine, world


@pytest.fixture
def alerts(tmp_path: Path) -> Alerts:
    engine = open_engine(f"sqlite:///{tmp_path / 'alerts.db'}")
    migrate(engine)
    return Alerts(engine)


def spec(keyword: str = "gasket", filters: str = "", mail: str = "") -> AlertSpec:
    return AlertSpec("Gaskets", keyword, filters, "FileShare", mail, "daily")


def index(solr: SolrClient, settings: Settings, docs: list[dict[str, Any]]) -> None:
    assert all(r.status == "ok" for r in Indexer.of(solr, settings).add(docs, commit=True))


def test_an_alert_finds_the_new_documents_its_user_may_read_once(
    solr: SolrClient, world: tuple[Settings, World], alerts: Alerts
) -> None:
    settings, w = world
    created = datetime.now(UTC) - timedelta(hours=1)
    hana = alerts.add("hana", spec(), now=created)["_id"]
    otto = alerts.add("otto", spec(), now=created)["_id"]
    index(solr, settings, [w.docs["alr-hr"]])
    main = Collection(solr, settings.collection_main)
    assert run_due(alerts, main, settings, now=created + DAY / 2) == []  # not due yet
    runs = {r.alert_id: r for r in run_due(alerts, main, settings, now=created + DAY)}
    assert [d["id"] for d in runs[hana].documents] == ["alr-hr"] and runs[otto].documents == []
    assert alerts.runs("hana", hana)[0]["documents"] == [
        {"id": "alr-hr", "title": "Gasket budget", "url": "file://alerts/hr"}
    ]
    later = {r.alert_id: r for r in run_due(alerts, main, settings, now=created + 2 * DAY)}
    assert later[hana].documents == []  # nothing new since the previous run
    assert alerts.get("hana", hana)["lastRun"] is not None


def trial_leaks(solr: SolrClient, settings: Settings, w: World, alerts: Alerts) -> tuple[list[str], int]:
    """Every random user has an alert; the corpus arrives; one run: (documents a run returned that
    its user may not read, documents returned in all)."""
    created = datetime.now(UTC) - timedelta(hours=1)
    owners = {alerts.add(user, spec(), now=created)["_id"]: user for user in w.users}
    index(solr, settings, list(w.docs.values()))
    leaks, seen = [], 0
    for run in run_due(alerts, Collection(solr, settings.collection_main), settings, now=created + DAY):
        tokens = w.users[owners[run.alert_id]]
        seen += len(run.documents)
        leaks += [f"{run.username}:{d['id']}" for d in run.documents if not reference_allows(tokens, w.docs[d["id"]])]
    return leaks, seen


def test_random_users_alerts_return_only_what_each_may_read(
    solr: SolrClient, world: tuple[Settings, World], alerts: Alerts
) -> None:
    settings, w = world
    leaks, seen = trial_leaks(solr, settings, w, alerts)
    assert leaks == []
    assert seen > 30  # the runs found documents: the harness looks at something


def test_the_control_with_both_filters_off_finds_the_leaks(
    solr: SolrClient, world: tuple[Settings, World], alerts: Alerts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("datafari_rag.solr.search.acl_params", layers_off("both"))
    settings, w = world
    leaks, _ = trial_leaks(solr, settings, w, alerts)
    assert len(leaks) > 10


def test_an_alert_with_a_filter_and_an_smtp_server_is_mailed(
    solr: SolrClient, world: tuple[Settings, World], alerts: Alerts
) -> None:
    settings, w = world
    created = datetime.now(UTC) - timedelta(hours=1)
    alert_id = alerts.add("hana", spec(filters='title_en:"budget"', mail="hana@example.org"), now=created)["_id"]
    index(solr, settings, [w.docs["alr-hr"], w.docs["alr-0"]])
    with smtp_sink() as (sink, port):
        mine = settings.replace(alerts_smtp_host="127.0.0.1", alerts_smtp_port=port)
        (run,) = run_due(alerts, Collection(solr, settings.collection_main), mine, now=created + DAY)
    assert [d["id"] for d in run.documents] == ["alr-hr"] and run.mailed
    (mail,) = sink.messages
    assert mail["To"] == "hana@example.org" and mail["Subject"] == "Gaskets"
    assert "Gasket budget: file://alerts/hr" in mail.get_payload()
    assert alerts.runs("hana", alert_id)[0]["mailed"] is True


def test_the_server_runs_due_alerts_by_itself(solr: SolrClient, world: tuple[Settings, World]) -> None:
    settings, w = world
    app = create_app(settings.replace(alerts_interval=1))
    store = app.extensions["live"].initial.store.alerts()
    alert_id = store.add("hana", spec(), now=datetime.now(UTC) - 2 * DAY)["_id"]  # overdue
    index(solr, settings, [w.docs["alr-hr"]])
    assert schedule_alerts(app) is not None
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not store.runs("hana", alert_id):
        time.sleep(0.5)
    assert store.runs("hana", alert_id), "the schedule did not run the overdue alert"
