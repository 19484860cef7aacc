"""The store's engine, and its schema brought up to date at start.

SQLite (the default, a file under the var directory) needs nothing installed; PostgreSQL
(``postgresql+psycopg://…``) is for production. Migrations are Alembic's, run by the first process
that starts: under a file lock for SQLite (its processes share a machine) and an advisory lock for
PostgreSQL (its sidecars may not), so workers starting together migrate once.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event, make_url, text
from sqlalchemy.exc import DisconnectionError, SQLAlchemyError

from ..config import Settings
from ..paths import var_dir

MIGRATIONS = Path(__file__).parent / "migrations"
_PG_LOCK = 0x646672_6167  # the advisory lock every sidecar takes to migrate ("dfrag")


def database_url(settings: Settings) -> str:
    """``store.url``, else SQLite in the var directory: ``store.db``, or the ``conversations.db``
    an install from before the store had its name keeps using (its users, conversations, keys)."""
    if settings.store_url:
        return settings.store_url
    older = var_dir() / "conversations.db"
    path = older if older.exists() and not (var_dir() / "store.db").exists() else var_dir() / "store.db"
    return f"sqlite:///{path}"


class StoreFileGone(SQLAlchemyError):
    """The SQLite file a connection writes to is no longer the store's file (deleted or replaced
    under the running process): what it wrote would be lost, so nothing is written."""


def _identity(path: str) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino


def open_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        path = make_url(url).database
        on_disk = path not in (None, "", ":memory:") and not str(path).startswith("file:")
        known: list[tuple[int, int] | None] = [None]  # the store's file, as the first connection found it

        def connect() -> sqlite3.Connection:
            # once the file exists, a connection never creates another one in its place
            mode = "rw" if known[0] is not None else "rwc"
            target = f"file:{quote(str(path))}?mode={mode}" if on_disk else (path or ":memory:")
            return sqlite3.connect(target, uri=on_disk, timeout=30, check_same_thread=False)

        engine = create_engine(url, creator=connect)

        @event.listens_for(engine, "connect")
        def _pragmas(connection: Any, record: Any) -> None:
            cursor = connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")  # ON DELETE CASCADE of a conversation's blocks
            cursor.execute("PRAGMA journal_mode=WAL")  # readers do not wait for a writer
            cursor.close()
            if on_disk:
                record.info["file"] = _identity(str(path))
                if known[0] is None:
                    known[0] = record.info["file"]

        @event.listens_for(engine, "checkout")
        def _same_file(_connection: Any, record: Any, _proxy: Any) -> None:
            # an open SQLite connection keeps writing to a deleted file's inode: every later
            # answer would say OK for turns gone at the next start
            if not on_disk:
                return
            if _identity(str(path)) != known[0]:
                raise StoreFileGone(
                    f"the store's file {path} was deleted or replaced while the sidecar ran; "
                    "put it back, or restart the sidecar to use the new one"
                )
            if record.info.get("file") != known[0]:  # opened on another file meanwhile: made again
                raise DisconnectionError("the connection was opened on another file")

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
