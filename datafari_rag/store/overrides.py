"""The ``rag.properties`` keys administrators change at run time (the admin page), kept in the
relational store so that every worker and every sidecar sharing the database applies them.

A save is one transaction: every value is checked before, so a refused save changes nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Engine, delete, func, select
from sqlalchemy.orm import sessionmaker

from ..config import secret_key
from ..security.sealed import Sealer
from .schema import SettingOverride
from .transaction import transaction

WHAT = "the settings store"


class OverrideStore:
    def __init__(self, engine: Engine, sealer: Sealer) -> None:
        self.sessions = sessionmaker(engine, expire_on_commit=False)
        self.sealer = sealer  # a secret key's value is kept sealed (security/sealed.py)

    def values(self) -> dict[str, str]:
        with transaction(self.sessions, WHAT) as session:
            rows = list(session.scalars(select(SettingOverride)))
        return {r.key: self.sealer.open(r.value) if secret_key(r.key) else r.value for r in rows}

    def version(self) -> tuple[int, str]:
        """Changes when any override changes (how workers see a save without reading the values):
        a set moves the newest time, a reset lowers the count."""
        with transaction(self.sessions, WHAT) as session:
            count, newest = session.execute(
                select(func.count(), func.max(SettingOverride.updated_at)).select_from(SettingOverride)
            ).one()
        return count, str(newest)

    def save(self, changes: dict[str, str | None], username: str) -> None:
        """Sets each key to its text, or back to the file's value (None), all or nothing."""
        now = datetime.now(UTC)
        with transaction(self.sessions, WHAT) as session:
            for key, value in changes.items():
                if value is not None and secret_key(key):
                    value = self.sealer.seal(value)
                row = session.get(SettingOverride, key)
                if value is None:
                    session.execute(delete(SettingOverride).where(SettingOverride.key == key))
                elif row is None:
                    session.add(SettingOverride(key=key, value=value, updated_at=now, updated_by=username))
                else:
                    row.value, row.updated_at, row.updated_by = value, now, username

    def seal_clear(self) -> int:
        """Seals the secrets saved before sealing existed; how many were."""
        with transaction(self.sessions, WHAT) as session:
            rows = [r for r in session.scalars(select(SettingOverride)) if secret_key(r.key)]
            clear = [r for r in rows if r.value != self.sealer.seal(r.value)]
            for row in clear:
                row.value = self.sealer.seal(row.value)
        return len(clear)
