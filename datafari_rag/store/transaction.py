"""One transaction of the relational store, and the one failure every store reports."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from .database import StoreFileGone


class StoreUnavailable(RuntimeError):
    """The database could not be reached or refused the operation."""


@contextmanager
def transaction(sessions: sessionmaker[Session], what: str, taken: Exception | None = None) -> Iterator[Session]:
    """One transaction, committed when the block ends, rolled back on any error: a unique
    constraint refused is ``taken`` (when given), any other database failure
    :class:`StoreUnavailable` naming ``what``."""
    try:
        with sessions.begin() as session:
            yield session
    except IntegrityError as exc:
        if taken is None:
            raise StoreUnavailable(f"{what} failed: IntegrityError") from exc
        raise taken from exc
    except StoreFileGone as exc:  # its own words: what happened to the file, and what to do
        raise StoreUnavailable(f"{what} failed: {exc}") from exc
    except SQLAlchemyError as exc:
        said = getattr(exc, "orig", None)  # the database's own words ("database or disk is full")
        raise StoreUnavailable(f"{what} failed: {type(exc).__name__}" + (f": {said}" if said else "")) from exc
