"""Saved searches and alerts in the relational store, each row its user's: every read and write
names the username the request's identity gave, so a user never sees, changes or deletes another's
(a name or id of someone else's answers as one that does not exist)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, Engine, delete, func, select, update
from sqlalchemy.orm import sessionmaker

from ..store import transaction
from ..store.schema import Alert, AlertRun, SavedSearch

WHAT = "the saved searches store"
FREQUENCIES = {"hourly": timedelta(hours=1), "daily": timedelta(days=1), "weekly": timedelta(weeks=1)}
MAX_SAVED = 100  # per user
MAX_ALERTS = 50  # per user


class SearchError(ValueError):
    """A refused saved-search or alert request, with its Datafari label."""

    def __init__(self, label: str, message: str) -> None:
        super().__init__(message)
        self.label = label


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class AlertSpec:
    """What an alert searches and how often: Datafari's alert fields."""

    subject: str
    keyword: str
    filters: str
    core: str
    mail: str
    frequency: str


class SavedSearches:
    def __init__(self, engine: Engine) -> None:
        self.sessions = sessionmaker(engine, expire_on_commit=False)

    def of_user(self, username: str) -> list[dict[str, str]]:
        with transaction(self.sessions, WHAT) as session:
            rows = session.scalars(select(SavedSearch).where(SavedSearch.username == username).order_by(SavedSearch.id))
            return [{"name": r.name, "search": r.search} for r in rows]

    def add(self, username: str, name: str, search: str) -> dict[str, str]:
        with transaction(self.sessions, WHAT) as session:
            mine = select(func.count()).select_from(SavedSearch).where(SavedSearch.username == username)
            if session.scalar(mine.where(SavedSearch.name == name)):
                raise SearchError("savedSearchExists", f"A saved search is already named {name!r}.")
            if (session.scalar(mine) or 0) >= MAX_SAVED:
                raise SearchError("savedSearchBadRequest", f"At most {MAX_SAVED} saved searches per user.")
            session.add(SavedSearch(username=username, name=name, search=search, created_at=datetime.now(UTC)))
        return {"name": name, "search": search}

    def delete(self, username: str, name: str) -> None:
        with transaction(self.sessions, WHAT) as session:
            gone = cast(
                CursorResult[Any],
                session.execute(delete(SavedSearch).where(SavedSearch.username == username, SavedSearch.name == name)),
            )
            if not gone.rowcount:
                raise SearchError("savedSearchNotFound", f"No saved search is named {name!r}.")


def alert_dict(row: Alert) -> dict[str, Any]:
    """An alert as Datafari's REST API shows it (``_id``, ``user``…), with its schedule."""
    return {
        "_id": row.id,
        "user": row.username,
        "subject": row.subject,
        "keyword": row.keyword,
        "filters": row.filters,
        "core": row.core,
        "mail": row.mail,
        "frequency": row.frequency,
        "lastRun": _utc(row.last_run_at).isoformat() if row.last_run_at else None,
        "nextRun": _utc(row.next_run_at).isoformat(),
    }


class Alerts:
    def __init__(self, engine: Engine) -> None:
        self.sessions = sessionmaker(engine, expire_on_commit=False)

    def of_user(self, username: str) -> list[dict[str, Any]]:
        with transaction(self.sessions, WHAT) as session:
            rows = session.scalars(select(Alert).where(Alert.username == username).order_by(Alert.created_at))
            return [alert_dict(r) for r in rows]

    def get(self, username: str, alert_id: str) -> dict[str, Any]:
        with transaction(self.sessions, WHAT) as session:
            return alert_dict(self._mine(session, username, alert_id))

    def add(self, username: str, spec: AlertSpec, now: datetime | None = None) -> dict[str, Any]:
        now = now or datetime.now(UTC)
        with transaction(self.sessions, WHAT) as session:
            count = session.scalar(select(func.count()).select_from(Alert).where(Alert.username == username)) or 0
            if count >= MAX_ALERTS:
                raise SearchError("alertBadRequest", f"At most {MAX_ALERTS} alerts per user.")
            row = Alert(id=str(uuid.uuid4()), username=username, created_at=now, **vars(spec))
            row.next_run_at = now + FREQUENCIES[spec.frequency]
            session.add(row)
            return alert_dict(row)

    def replace(self, username: str, alert_id: str, spec: AlertSpec) -> dict[str, Any]:
        with transaction(self.sessions, WHAT) as session:
            row = self._mine(session, username, alert_id)
            for key, value in vars(spec).items():
                setattr(row, key, value)
            row.next_run_at = _utc(row.last_run_at or row.created_at) + FREQUENCIES[spec.frequency]
            return alert_dict(row)

    def delete(self, username: str, alert_id: str) -> None:
        with transaction(self.sessions, WHAT) as session:
            session.delete(self._mine(session, username, alert_id))

    def runs(self, username: str, alert_id: str, limit: int = 20) -> list[dict[str, Any]]:
        """The alert's latest runs, newest first."""
        with transaction(self.sessions, WHAT) as session:
            self._mine(session, username, alert_id)
            rows = session.scalars(
                select(AlertRun).where(AlertRun.alert_id == alert_id).order_by(AlertRun.id.desc()).limit(limit)
            )
            return [
                {"ranAt": _utc(r.ran_at).isoformat(), "found": r.found, "documents": r.documents, "mailed": r.mailed}
                for r in rows
            ]

    def due(self, now: datetime) -> list[tuple[str, str, AlertSpec, datetime]]:
        """The alerts whose time has come, each claimed for this caller (a run elsewhere that
        claimed it first wins): (id, username, spec, the time the previous run saw up to)."""
        claimed = []
        with transaction(self.sessions, WHAT) as session:
            rows = list(session.scalars(select(Alert).where(Alert.next_run_at <= now).order_by(Alert.next_run_at)))
        for row in rows:
            since = _utc(row.last_run_at or row.created_at)
            with transaction(self.sessions, WHAT) as session:
                claim = (
                    update(Alert)
                    .where(Alert.id == row.id, Alert.next_run_at == row.next_run_at)
                    .values(next_run_at=now + FREQUENCIES.get(row.frequency, FREQUENCIES["daily"]), last_run_at=now)
                )
                won = cast(CursorResult[Any], session.execute(claim))
            if won.rowcount:
                spec = AlertSpec(row.subject, row.keyword, row.filters, row.core, row.mail, row.frequency)
                claimed.append((row.id, row.username, spec, since))
        return claimed

    def record(self, alert_id: str, ran_at: datetime, documents: list[dict[str, Any]], mailed: bool) -> None:
        with transaction(self.sessions, WHAT) as session:
            session.add(
                AlertRun(alert_id=alert_id, ran_at=ran_at, found=len(documents), documents=documents, mailed=mailed)
            )

    @staticmethod
    def _mine(session: Any, username: str, alert_id: str) -> Alert:
        row = session.get(Alert, alert_id)
        if row is None or row.username != username:  # another's answers as a missing one
            raise SearchError("alertNotFound", "No such alert.")
        return row
