"""Every test here runs on the real Solr with the real embedding model."""

import json
from pathlib import Path

import pytest

from datafari_rag.config import Settings

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks this folder's tests (the hook sees the whole session's items, not only these)."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.integration)


def cli_environment(monkeypatch: pytest.MonkeyPatch, var: Path, **keys: str) -> None:
    """Points the ``datafari-rag`` command at the test's servers: each key (``SOLR_URL``…) becomes
    ``DATAFARI_RAG_<key>``, and the command's state lives under ``var``."""
    for key, value in {**keys, "VAR": str(var)}.items():
        monkeypatch.setenv(f"DATAFARI_RAG_{key}", value)


def mapped_users(settings: Settings, folder: Path, prefix: str, users: dict[str, list[str]]) -> Settings:
    """Collections of a test's own (``<prefix>_FileShare``, ``<prefix>_VectorMain``) whose users'
    tokens come from a mapping file, each user named by the trusted header as a reverse proxy does."""
    (folder / "mapping.json").write_text(json.dumps({"users": users}))
    return settings.replace(
        collection_main=f"{prefix}_FileShare",
        collection_vector=f"{prefix}_VectorMain",
        mapping_file=str(folder / "mapping.json"),
        trusted_header="X-Remote-User",
        trusted_proxies="127.0.0.1",
    )
