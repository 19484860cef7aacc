"""/health looks at the relational store too: a SQLite file deleted under the running sidecar is
reported (and refused), never answered OK while what is written would be lost."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings


def until(client: FlaskClient, done: Callable[[dict[str, Any]], bool], seconds: float = 10) -> dict[str, Any]:
    """The first /health report ``done`` accepts (the checks run in the background)."""
    deadline = time.monotonic() + seconds
    while True:
        report = client.get("/health").get_json()
        if done(report) or time.monotonic() > deadline:
            return report
        time.sleep(0.05)


def test_health_reports_a_store_whose_file_was_deleted(tmp_path: Path) -> None:
    database = tmp_path / "conversations.db"
    settings = Settings(solr_url="http://127.0.0.1:9/solr", store_url=f"sqlite:///{database}", health_interval=0.1)
    client = create_app(settings).test_client()
    report = until(client, lambda r: r.get("store", {}).get("status") == "UP")
    assert report["store"] == {"status": "UP", "dialect": "sqlite"}
    database.unlink()
    answer = client.get("/health")
    report = until(client, lambda r: r["store"]["status"] == "DOWN")  # at the next background check
    assert client.get("/health").status_code == 503 and answer.status_code == 503  # Solr is down too
    store = report["store"]
    assert store["status"] == "DOWN" and "deleted or replaced" in store["error"]
