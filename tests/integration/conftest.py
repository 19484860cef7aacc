"""Every test here runs on the real Solr with the real embedding model."""

import json
from pathlib import Path
from typing import Any

import pytest

from datafari_rag.config import Settings

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks this folder's tests (the hook sees the whole session's items, not only these)."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.integration)


def cli_environment(monkeypatch: pytest.MonkeyPatch, var: Path, solr: Settings, **keys: str) -> None:
    """Points the ``datafari-rag`` command at the test's servers: Solr as ``solr`` names it (URL and
    service account), each key (``SOLR_COLLECTION_MAIN``…) as ``DATAFARI_RAG_<key>``, and the
    command's state under ``var``."""
    account = {"SOLR_URL": solr.solr_url, "SOLR_USERNAME": solr.solr_username, "SOLR_PASSWORD": solr.solr_password}
    for key, value in {**account, **keys, "VAR": str(var)}.items():
        monkeypatch.setenv(f"DATAFARI_RAG_{key}", value)


def trusted_users(settings: Settings, folder: Path, users: dict[str, list[str]]) -> Settings:
    """Users whose tokens come from a mapping file, each named by the trusted header as a reverse
    proxy does (X-Remote-User from 127.0.0.1)."""
    (folder / "mapping.json").write_text(json.dumps({"users": users}))
    return settings.replace(
        mapping_file=str(folder / "mapping.json"), trusted_header="X-Remote-User", trusted_proxies="127.0.0.1"
    )


def mapped_users(settings: Settings, folder: Path, prefix: str, users: dict[str, list[str]]) -> Settings:
    """Collections of a test's own (``<prefix>_FileShare``, ``<prefix>_VectorMain``) whose users'
    tokens come from a mapping file, each user named by the trusted header as a reverse proxy does."""
    mine = settings.replace(collection_main=f"{prefix}_FileShare", collection_vector=f"{prefix}_VectorMain")
    return trusted_users(mine, folder, users)


def board_world(
    solr: Any, settings: Settings, folder: Path, prefix: str, restricted: dict[str, Any], sample: bool = True
) -> Settings:
    """Collections of a test's own holding the sample corpus (unless ``sample`` is false) and one
    ``restricted`` document only the board may read; users bea (board) and otto (no token)."""
    from datafari_rag.indexing.indexer import Indexer
    from datafari_rag.indexing.sample import index_sample
    from datafari_rag.solr.bootstrap import bootstrap

    mine = mapped_users(settings, folder, prefix, {"bea": ["board"], "otto": []})
    bootstrap(solr, mine)
    indexer = Indexer.of(solr, mine)
    if sample:
        index_sample(indexer)
    doc = {"url": restricted["id"], **restricted, "allow_token_document": ["board"]}
    assert [r.status for r in indexer.add([doc], commit=True)] == ["ok"]
    return mine


PASSWORD = "correct horse battery"  # every local user's in the tests
MEMO = {
    "id": "file://share/board/pay.txt",
    "title": "Board pay memo",
    "exactContent": "The board pay memo: salaries rise by 3 percent.",
}


def signed_in_world(
    solr: Any,
    settings: Settings,
    folder: Path,
    prefix: str,
    users: dict[str, bool],
    sample: bool = True,
    **changes: Any,
) -> Settings:
    """:func:`board_world` (the board's pay memo for bea) with local sign-in: an HS256 secret, a
    store of the test's own, BM25, and these local users (name -> administrator), password
    :data:`PASSWORD`."""
    from datafari_rag.store import StoreHandle

    mine = board_world(solr, settings, folder, prefix, MEMO, sample).replace(
        jwt_hs256_secret="a test secret of at least thirty-two bytes!",
        store_url=f"sqlite:///{folder / 'store.db'}",
        retrieval_method="bm25",
        **changes,
    )
    store = StoreHandle(mine).users()
    for name, admin in users.items():
        if store.get(name) is None:
            store.create(name, PASSWORD, admin=admin)
    return mine
