"""Readiness's look at the store: a store that answers reads but cannot write (a full disk, a
read-only file system) would fail every turn, conversation and job, so it is not ready. The probe
rewrites one row with about a turn's worth of bytes; as soon as the write goes through again
(space freed), the store is ready again, with the same engine and no restart."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from sqlalchemy import Engine, update
from sqlalchemy.exc import SQLAlchemyError

from .schema import StoreProbe
from .transaction import StoreUnavailable

PROBE_BYTES = 16384  # a stored turn with its sources is of this order


def probe_write(engine: Engine) -> None:
    """Writes and commits the probe row; :class:`StoreUnavailable` with the database's own words
    when it cannot."""
    try:
        with engine.begin() as connection:
            done = connection.execute(
                update(StoreProbe)
                .where(StoreProbe.id == 1)
                .values(checked_at=datetime.now(UTC), payload=os.urandom(PROBE_BYTES))
            )
            if done.rowcount != 1:
                raise StoreUnavailable("the store's probe row is missing: run the migrations again")
    except SQLAlchemyError as exc:
        reason = getattr(exc, "orig", None) or exc
        raise StoreUnavailable(f"the store cannot write: {reason}") from exc
