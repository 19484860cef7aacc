"""/health looks at the relational store too: a SQLite file deleted under the running sidecar is
reported (and refused), never answered OK while what is written would be lost."""

from __future__ import annotations

from pathlib import Path

from datafari_rag.app import create_app
from datafari_rag.config import Settings


def test_health_reports_a_store_whose_file_was_deleted(tmp_path: Path) -> None:
    database = tmp_path / "conversations.db"
    settings = Settings(solr_url="http://127.0.0.1:9/solr", conversations_url=f"sqlite:///{database}")
    client = create_app(settings).test_client()
    for _ in range(20):  # the first look opens and migrates the store, which may take its second
        report = client.get("/health").get_json()
        if report["store"]["status"] == "UP":
            break
    assert report["store"] == {"status": "UP", "dialect": "sqlite"}
    database.unlink()
    report = client.get("/health")
    assert report.status_code == 503
    store = report.get_json()["store"]
    assert store["status"] == "DOWN" and "deleted or replaced" in store["error"]
