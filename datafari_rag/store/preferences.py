"""A user's DatafariUI preferences (language, page layout): read with ``GET v1.0/users/current``,
saved with ``PUT``. Only the user's own row is ever read or written: the username comes from the
request's identity, never from the body."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import sessionmaker

from .schema import UserPreference
from .transaction import transaction

WHAT = "the preferences store"


@dataclass(frozen=True)
class Preferences:
    lang: str | None = None
    ui_config: dict[str, Any] | None = None


class PreferenceStore:
    def __init__(self, engine: Engine) -> None:
        self.sessions = sessionmaker(engine, expire_on_commit=False)

    def get(self, username: str) -> Preferences:
        with transaction(self.sessions, WHAT) as session:
            row = session.get(UserPreference, username)
        return Preferences() if row is None else Preferences(row.lang, row.ui_config)

    def save(self, username: str, lang: str | None = None, ui_config: dict[str, Any] | None = None) -> Preferences:
        """Sets what is given (None: kept as it was), in one transaction."""
        with transaction(self.sessions, WHAT) as session:
            row = session.get(UserPreference, username)
            if row is None:
                row = UserPreference(username=username, updated_at=datetime.now(UTC))
                session.add(row)
            if lang is not None:
                row.lang = lang
            if ui_config is not None:
                row.ui_config = ui_config
            row.updated_at = datetime.now(UTC)
            return Preferences(row.lang, row.ui_config)
