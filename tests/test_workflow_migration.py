"""Revision 0017 turns a workflow's columns and child rows into its document: a workflow saved by
the earlier schema reads back whole through the new store, its API keys untouched, and the
downgrade gives the rows back."""

from __future__ import annotations

from datetime import UTC, datetime

from alembic import command
from cryptography.fernet import Fernet
from sqlalchemy import text

from datafari_rag.security.sealed import Sealer
from datafari_rag.store.database import _alembic, open_engine
from datafari_rag.workflows.store import WorkflowStore, key_hash

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def _to(engine, revision: str, down: bool = False) -> None:  # type: ignore[no-untyped-def]
    config = _alembic()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        (command.downgrade if down else command.upgrade)(config, revision)


def _old_workflow(engine) -> None:  # type: ignore[no-untyped-def]
    """A workflow as revision 0016's schema held it: columns, then a row per part."""
    rows = [
        (
            "INSERT INTO workflow (id, name, description, retrieval, strategy, parent_child, instructions, prompts,"
            " collection, is_default, created_at, updated_at) VALUES ('w1', 'Support desk', 'for the desk', 'rrf',"
            " 'cot', :t, 'Answer as the desk.', '{\"map\": \"Summarise briefly.\"}', '', :t, :now, :now)"
        ),
        "INSERT INTO chunker (workflow_id, kind, max_chunk_size, overlap, evaluator, threshold)"
        " VALUES ('w1', 'recursive', 800, 80, :f, 0.7)",
        "INSERT INTO query_enhancer (workflow_id, position, kind, options) VALUES ('w1', 0, 'rewrite', '{}')",
        "INSERT INTO query_enhancer (workflow_id, position, kind, options)"
        " VALUES ('w1', 1, 'multiQuery', '{\"count\": 2, \"minVotes\": 1}')",
        "INSERT INTO workflow_filter (workflow_id, field, value) VALUES ('w1', 'extension', 'pdf')",
        "INSERT INTO workflow_filter (workflow_id, field, value) VALUES ('w1', 'extension', 'txt')",
        "INSERT INTO ranker (workflow_id, kind, top_n, options) VALUES ('w1', 'llm', 30, '{}')",
        "INSERT INTO api_key (id, workflow_id, name, prefix, key_hash, username, created_at)"
        " VALUES ('k1', 'w1', 'intranet', 'dfr_abc', :hash, 'bea', :now)",
    ]
    with engine.begin() as connection:
        for statement in rows:
            connection.execute(text(statement), {"t": True, "f": False, "now": NOW, "hash": key_hash("dfr_secret")})


def test_a_workflow_of_the_earlier_schema_reads_back_whole_and_keeps_its_keys(database_url: str) -> None:
    engine = open_engine(database_url)
    _to(engine, "0016")
    _old_workflow(engine)
    _to(engine, "head")
    store = WorkflowStore(engine, Sealer([Fernet.generate_key().decode()]))
    read = store.get("w1").as_dict()
    assert {k: v for k, v in read.items() if k not in ("id", "created_at", "updated_at")} == {
        "name": "Support desk",
        "description": "for the desk",
        "retrieval": "rrf",
        "strategy": "cot",
        "parentChild": True,
        "instructions": "Answer as the desk.",
        "prompts": {"map": "Summarise briefly."},
        "chunker": {"kind": "recursive", "maxChunkSize": 800, "overlap": 80, "evaluator": False, "threshold": 0.7},
        "queryEnhancers": [{"kind": "rewrite"}, {"kind": "multiQuery", "count": 2, "minVotes": 1}],
        "filters": {"extension": ["pdf", "txt"]},
        "ranker": {"kind": "llm", "topN": 30},
        "collection": "",
        "default": True,
    }
    assert store.key_user("w1", "dfr_secret") == "bea"  # its key survived the table's change
    assert store.default() is not None and store.default().id == "w1"  # type: ignore[union-attr]
    # and back: the earlier schema's rows, as they were
    _to(engine, "0016", down=True)
    with engine.connect() as connection:
        enhancers = connection.execute(text("SELECT kind FROM query_enhancer ORDER BY position")).scalars().all()
        chunk = connection.execute(text("SELECT max_chunk_size, overlap FROM chunker")).one()
        retrieval = connection.execute(text("SELECT retrieval FROM workflow")).scalar_one()
        keys = connection.execute(text("SELECT count(*) FROM api_key")).scalar_one()
    assert (enhancers, tuple(chunk), retrieval, keys) == (["rewrite", "multiQuery"], (800, 80), "rrf", 1)
    engine.dispose()
