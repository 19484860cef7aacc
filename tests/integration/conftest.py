"""Every test here runs on the real Solr with the real embedding model."""

from pathlib import Path

import pytest

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
