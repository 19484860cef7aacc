"""The store's engine, and its schema brought up to date at start.

SQLite (the default, a file under the var directory) needs nothing installed; PostgreSQL
(``postgresql+psycopg://…``) is for production. Migrations are Alembic's, run by the first process
that starts: under a file lock for SQLite (its processes share a machine) and an advisory lock for
PostgreSQL (its sidecars may not), so workers starting together migrate once.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event, text

from ..config import Settings
from ..paths import var_dir

MIGRATIONS = Path(__file__).parent / "migrations"
_PG_LOCK = 0x646672_6167  # the advisory lock every sidecar takes to migrate ("dfrag")


def database_url(settings: Settings) -> str:
    return settings.conversations_url or f"sqlite:///{var_dir() / 'conversations.db'}"


def open_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _pragmas(connection: Any, _record: Any) -> None:
            cursor = connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")  # ON DELETE CASCADE of a conversation's blocks
            cursor.execute("PRAGMA journal_mode=WAL")  # readers do not wait for a writer
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10)


def _alembic() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def migrate(engine: Engine) -> None:
    """Brings the schema to the newest revision (nothing to do: one query)."""
    config = _alembic()
    if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
        database = Path(engine.url.database)
        database.parent.mkdir(parents=True, exist_ok=True)
        with open(f"{database}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            _upgrade(engine, config)
        return
    _upgrade(engine, config)


def _upgrade(engine: Engine, config: Config) -> None:
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK})
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def is_current(engine: Engine) -> bool:
    """Whether the schema is at the newest revision (for /health)."""
    head = ScriptDirectory.from_config(_alembic()).get_current_head()
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision() == head
