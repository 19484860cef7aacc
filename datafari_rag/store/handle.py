"""The process's relational store: one engine, opened (and migrated) at its first use rather than at
start, so that the sidecar serves searches and answers while the database is down; a failed opening
is tried again by the next request that needs it, after :attr:`StoreHandle.RETRY_AFTER`.

Each group of tables has a store of its own, made once per handle on the same engine: those of
this package (users, the sign-in throttle, settings overrides, the OAuth server's grants) here,
those of a feature (conversations, workflows, index jobs) where ``services.py`` assembles them.
"""

from __future__ import annotations

import threading
import time
from functools import cached_property
from typing import Any, Protocol, TypeVar

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from ..config import Settings
from ..security.sealed import Sealer
from .database import database_url, migrate, open_engine
from .oauth import OAuthStore
from .overrides import OverrideStore
from .preferences import PreferenceStore
from .sign_ins import SignInThrottle
from .transaction import StoreUnavailable
from .users import UserStore

P = TypeVar("P")
S = TypeVar("S", bound="SealsClear")


class SealsClear(Protocol):
    def seal_clear(self) -> int: ...


class StoreHandle:
    RETRY_AFTER = 10.0  # seconds: while the database is down, requests are not held by reconnections

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._engine: Engine | None = None
        self._failed: tuple[float, StoreUnavailable] | None = None
        self._lock = threading.Lock()
        self._parts: dict[type, Any] = {}  # the stores of the same database, made once each

    def engine(self) -> Engine:
        """The engine of ``store.url``, its schema migrated to the newest revision."""
        with self._lock:
            if self._engine is not None:
                return self._engine
            if self._failed and time.monotonic() - self._failed[0] < self.RETRY_AFTER:
                raise self._failed[1]
            try:
                self._engine = self._open()
            except StoreUnavailable as exc:
                self._failed = (time.monotonic(), exc)
                raise
            return self._engine

    def _open(self) -> Engine:
        engine = open_engine(database_url(self.settings))
        try:
            migrate(engine)
        except SQLAlchemyError as exc:
            engine.dispose()
            raise StoreUnavailable(f"the store cannot be prepared: {exc}") from exc
        return engine

    def part(self, kind: type[P], *args: Any) -> P:
        """The store ``kind(engine, *args)`` of this database, made once."""
        if kind not in self._parts:
            self._parts[kind] = kind(self.engine(), *args)  # type: ignore[call-arg]
        made: P = self._parts[kind]
        return made

    def sealed_part(self, kind: type[S], *args: Any) -> S:
        """A store that keeps secrets, made with the sealer; what it saved in clear before sealing
        existed is sealed once, before it is first handed out."""
        if kind not in self._parts:
            part = kind(self.engine(), self.sealer, *args)  # type: ignore[call-arg]
            part.seal_clear()
            self._parts[kind] = part
        made: S = self._parts[kind]
        return made

    @cached_property
    def sealer(self) -> Sealer:
        """What seals the secrets this database keeps (security.secretsKey)."""
        return Sealer.of(self.settings)

    def users(self) -> UserStore:
        """The local users."""
        return self.part(UserStore, self.settings.users_min_password)

    def sign_ins(self) -> SignInThrottle:
        """The sign-in throttle's counts."""
        s = self.settings
        return self.part(SignInThrottle, s.sign_in_max_failures, s.sign_in_max_failures_per_address, s.sign_in_window)

    def overrides(self) -> OverrideStore:
        """The settings administrators changed at run time."""
        return self.sealed_part(OverrideStore)

    def preferences(self) -> PreferenceStore:
        """Each user's DatafariUI language and layout."""
        return self.part(PreferenceStore)

    def oauth(self) -> OAuthStore:
        """The clients and grants of /mcp's OAuth authorization server."""
        return self.part(OAuthStore, self.sealer, self.settings.mcp_oauth_max_clients)  # sealed from the start
