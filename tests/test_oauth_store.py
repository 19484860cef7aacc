"""What /mcp's authorization server keeps, on SQLite and PostgreSQL alike: a client's secret
sealed, codes and refresh tokens as digests only, each taken once, none past its expiry, and no
more clients than allowed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import text

from datafari_rag.config import Settings
from datafari_rag.store import StoreHandle
from datafari_rag.store.oauth import Grant, TooManyClients

SECRET, CODE = "client-secret-5151", "the-code-value-6262"


def raw(handle: StoreHandle, query: str) -> str:
    with handle.engine().connect() as connection:
        return " ".join(str(row) for row in connection.execute(text(query)))


def test_clients_and_grants_are_kept_sealed_digested_and_used_once(database_url: str, tmp_path: Path) -> None:
    settings = Settings().replace(store_url=database_url, secrets_key_file=str(tmp_path / "k"), mcp_oauth_max_clients=2)
    handle = StoreHandle(settings)
    store = handle.oauth()
    store.register("c1", {"client_id": "c1", "client_secret": SECRET, "redirect_uris": ["http://127.0.0.1/cb"]})
    assert store.client("c1") == {"client_id": "c1", "client_secret": SECRET, "redirect_uris": ["http://127.0.0.1/cb"]}
    assert store.client("nobody") is None
    store.grant("code", CODE, Grant("c1", "bea", {"code_challenge": "x"}, time.time() + 60))
    stored = raw(handle, "SELECT * FROM oauth_client") + raw(handle, "SELECT * FROM oauth_grant")
    assert SECRET not in stored and CODE not in stored and "bea" in stored
    found = store.find("code", CODE, "c1")
    assert found is not None and found.username == "bea" and found.details == {"code_challenge": "x"}
    assert store.find("code", CODE, "c2") is None and store.find("refresh", CODE, "c1") is None
    assert store.take("code", CODE) and not store.take("code", CODE) and store.find("code", CODE, "c1") is None
    store.grant("refresh", "old", Grant("c1", "bea", {}, time.time() - 1))
    assert store.find("refresh", "old", "c1") is None  # expired
    store.register("c2", {"client_id": "c2"})
    with pytest.raises(TooManyClients, match=r"mcp\.oauth\.maxClients"):
        store.register("c3", {"client_id": "c3"})
