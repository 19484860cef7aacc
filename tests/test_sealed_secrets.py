"""Secrets at rest: the relational store keeps an administrator's LLM token and a workflow's
reranker key sealed with a key it does not hold, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import text

from datafari_rag.config import Settings
from datafari_rag.security.sealed import PREFIX, SealedSecretError, Sealer
from datafari_rag.services import Stores
from datafari_rag.workflows.spec import parse_workflow

TOKEN, RERANK_KEY = "sk-the-llm-token-4242", "rk-the-reranker-key-7373"


def raw(handle: Stores, query: str) -> str:
    """What the database holds, read around the product."""
    with handle.engine().connect() as connection:
        return " ".join(str(row) for row in connection.execute(text(query)))


def test_a_sealed_value_opens_with_its_key_and_rotated_keys_and_nothing_else() -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    sealed = Sealer([old]).seal(TOKEN)
    assert sealed.startswith(PREFIX) and TOKEN not in sealed and Sealer([old]).open(sealed) == TOKEN
    assert Sealer([new, old]).open(sealed) == TOKEN  # rotation: the new key seals, the old still opens
    assert Sealer([new, old]).seal(sealed) == sealed and Sealer([old]).seal("") == ""
    assert Sealer([old]).open("written before sealing") == "written before sealing"
    with pytest.raises(SealedSecretError, match=r"security\.secretsKey"):
        Sealer([new]).open(sealed)
    tampered = sealed[:-6] + ("A" if sealed[-6] != "A" else "B") + sealed[-5:]
    with pytest.raises(SealedSecretError):
        Sealer([old]).open(tampered)


def test_the_secrets_saved_at_run_time_are_sealed_in_the_database(database_url: str, tmp_path: Path) -> None:
    key_file = tmp_path / "secrets" / "store.key"
    settings = Settings().replace(store_url=database_url, secrets_key_file=str(key_file))
    handle = Stores(settings)
    handle.overrides().save({"ai.api.token": TOKEN, "rag.maxFiles": "4"}, "root")
    spec = parse_workflow(
        {"name": "sealed", "ranker": {"kind": "api", "url": "http://rerank.example/v1", "apiKey": RERANK_KEY}},
        settings,
    )
    made = handle.workflows().create(spec)
    stored = raw(handle, "SELECT key, value FROM setting_override") + raw(handle, "SELECT document FROM workflow")
    assert TOKEN not in stored and RERANK_KEY not in stored and stored.count(PREFIX) == 2
    assert "rag.maxFiles" in stored and "'4'" in stored  # what is not a secret stays readable
    # the product reads them back, in another process's handle too (the same key file)
    again = Stores(settings)
    assert again.overrides().values() == {"ai.api.token": TOKEN, "rag.maxFiles": "4"}
    assert again.workflows().get(made.id).spec.ranker.apiKey == RERANK_KEY  # type: ignore[union-attr]
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    # another key opens nothing: the settings are refused, never read as garbage or as empty
    other = Stores(settings.replace(secrets_key=Fernet.generate_key().decode()))
    with pytest.raises(SealedSecretError):
        other.overrides().values()


def test_secrets_saved_in_clear_before_are_sealed_when_the_store_opens(database_url: str, tmp_path: Path) -> None:
    settings = Settings().replace(store_url=database_url, secrets_key=Fernet.generate_key().decode())
    before = Stores(settings)
    with before.engine().begin() as connection:  # as an earlier version wrote them
        connection.execute(
            text(
                "INSERT INTO setting_override (key, value, updated_at, updated_by) VALUES ('ai.api.token', :v, :t, 'x')"
            ),
            {"v": TOKEN, "t": "2026-11-01 00:00:00"},
        )
    assert TOKEN in raw(before, "SELECT value FROM setting_override")
    after = Stores(settings)
    assert after.overrides().values() == {"ai.api.token": TOKEN}
    assert TOKEN not in raw(after, "SELECT value FROM setting_override")
