"""The sign-in throttle: refused sign-ins counted per username and per address, in the relational
store so that every worker and every sidecar sharing the database counts the same failures.

Past ``max_per_user`` failures for a name (or ``max_per_address`` from one address) within
``window`` seconds, every sign-in for it is refused — the right password too — until the oldest of
those failures leaves the window: guessing costs time whatever the guesser's parallelism. A
success clears its name's failures, not its address's (one address spraying many names stays
counted).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, delete, select
from sqlalchemy.orm import Session, sessionmaker

from .schema import SignInFailure
from .transaction import transaction

WHAT = "the sign-in throttle"


def _user_key(username: str) -> str:
    return f"user:{username.strip().lower()[:255]}"


def _address_key(address: str | None) -> str:
    return f"addr:{(address or 'unknown')[:64]}"


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # SQLite drops the zone


class SignInThrottle:
    def __init__(self, engine: Engine, max_per_user: int, max_per_address: int, window: float) -> None:
        self.sessions = sessionmaker(engine, expire_on_commit=False)
        self.max_per_user, self.max_per_address = max_per_user, max_per_address
        self.window = timedelta(seconds=window)

    def wait(self, username: str, address: str | None, now: datetime | None = None) -> int:
        """Seconds before a sign-in for ``username`` from ``address`` may be tried (0: now)."""
        now = now or datetime.now(UTC)
        wait = 0.0
        with transaction(self.sessions, WHAT) as session:
            for limit, key in ((self.max_per_user, _user_key(username)), (self.max_per_address, _address_key(address))):
                times = self._recent(session, key, now)
                if len(times) >= limit:
                    # free again when all but limit-1 of them have left the window
                    wait = max(wait, (times[len(times) - limit] + self.window - now).total_seconds())
        return math.ceil(wait) if wait > 0 else 0

    def failed(self, username: str, address: str | None, now: datetime | None = None) -> None:
        """Counts one refused sign-in, and forgets those older than the window."""
        now = now or datetime.now(UTC)
        with transaction(self.sessions, WHAT) as session:
            session.execute(delete(SignInFailure).where(SignInFailure.at < now - self.window))
            session.add_all(
                [SignInFailure(key=_user_key(username), at=now), SignInFailure(key=_address_key(address), at=now)]
            )

    def succeeded(self, username: str) -> None:
        with transaction(self.sessions, WHAT) as session:
            session.execute(delete(SignInFailure).where(SignInFailure.key == _user_key(username)))

    def _recent(self, session: Session, key: str, now: datetime) -> list[datetime]:
        query = select(SignInFailure.at).where(SignInFailure.key == key, SignInFailure.at >= now - self.window)
        return sorted(_utc(t) for t in session.scalars(query))
