"""A real PostgreSQL server for the tests, from the ``pgserver`` wheel (PostgreSQL's own
binaries, installed by pip like any test dependency: nothing else to set up on a fresh machine,
root included — pgserver runs the server as an unprivileged user then)."""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def postgres(folder: Path) -> Iterator[Any]:
    """A PostgreSQL server whose data lives in ``folder``, stopped when the block ends."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: no XDG runtime directory on CI machines
        import pgserver

        server = pgserver.get_server(folder, cleanup_mode="stop")
    try:
        yield server
    finally:
        server.cleanup()


def new_database(server: Any) -> str:
    """A new, empty database on ``server``; its SQLAlchemy URL (psycopg 3 driver)."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    server.psql(f"CREATE DATABASE {name};")
    return server.get_uri(name).replace("postgresql://", "postgresql+psycopg://", 1)
