"""A durable list of parents whose chunks still have to be written (SQLite under the data dir).

When FileShare accepted a document but VectorMain or the embedding service failed, the parent
id is recorded here; ``datafari-rag reconcile`` (and ``sync``) process the list again, so a
failure loses nothing.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from ..paths import var_dir


class Outbox:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or var_dir() / "outbox.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS pending (collection TEXT NOT NULL, parent_id TEXT NOT NULL, "
                "reason TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 1, updated REAL NOT NULL, "
                "PRIMARY KEY (collection, parent_id))"
            )

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def add(self, collection: str, parent_ids: list[str], reason: str) -> None:
        now = time.time()
        with self._lock, self._connect() as db:
            db.executemany(
                "INSERT INTO pending (collection, parent_id, reason, updated) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (collection, parent_id) DO UPDATE SET reason = excluded.reason, "
                "attempts = attempts + 1, updated = excluded.updated",
                [(collection, pid, reason[:2000], now) for pid in parent_ids],
            )

    def remove(self, collection: str, parent_ids: list[str]) -> None:
        with self._lock, self._connect() as db:
            db.executemany(
                "DELETE FROM pending WHERE collection = ? AND parent_id = ?", [(collection, p) for p in parent_ids]
            )

    def pending(self, collection: str) -> list[tuple[str, str, int]]:
        """(parent id, last reason, attempts), oldest first."""
        with self._lock, self._connect() as db:
            rows = db.execute(
                "SELECT parent_id, reason, attempts FROM pending WHERE collection = ? ORDER BY updated",
                (collection,),
            )
            return [(r[0], r[1], r[2]) for r in rows]
