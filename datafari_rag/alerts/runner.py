"""Runs the alerts whose time has come, each as its user: the alert's keyword and filters, the
user's access filter, and only the documents indexed since the alert's previous run. What each
run found is recorded (``alert_run``); with an SMTP server configured it is also mailed.

The user's tokens are those the authority (or the mapping file) gives the username; groups an
identity provider put in a token are not known outside a request, so an alert may see less than
its user would in the page, never more.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..config import Settings
from ..security.acl import UserAccess
from ..security.authority import tokens_for
from ..solr import SolrError
from ..solr.collection import Collection
from ..solr.search import from_user
from .mail import send_alert
from .store import Alerts, AlertSpec

log = logging.getLogger(__name__)
MAX_DOCUMENTS = 50  # per run


@dataclass(frozen=True)
class Run:
    alert_id: str
    username: str
    documents: list[dict[str, Any]]
    mailed: bool


def _solr_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def searched(spec: AlertSpec) -> list[tuple[str, Any]]:
    """The alert's own search: its keyword and filters are its user's, judged by Solr's door
    (when the alert is saved, and again at every run)."""
    return [
        from_user("q", spec.keyword.strip() or "*:*"),
        ("defType", "edismax"),
        *(from_user("fq", f) for f in spec.filters.split("&") if f.strip()),
        ("hl", "false"),
    ]


def check(main: Collection, access: UserAccess, spec: AlertSpec) -> None:
    """Runs the alert's search once (no rows) as its user, so that a search Solr's door refuses is
    refused when the alert is saved, not at its first run; raises :class:`SolrError`."""
    main.search("select", [*searched(spec), ("rows", 0)], access)


def new_documents(main: Collection, access: UserAccess, spec: AlertSpec, since: datetime, now: datetime) -> list[Any]:
    """The documents ``access`` may read that match the alert and were indexed in (since, now]."""
    params: list[tuple[str, Any]] = [
        *searched(spec),
        ("fq", f"indexed_at:{{{_solr_time(since)} TO {_solr_time(now)}]"),
        ("rows", MAX_DOCUMENTS),
        ("fl", "id,title,url"),
        ("sort", "indexed_at desc"),
    ]
    docs = main.search("select", params, access)["response"]["docs"]
    return [{"id": d.get("id"), "title": _first(d.get("title")), "url": d.get("url")} for d in docs]


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, list) and value else value


def run_due(alerts: Alerts, main: Collection, settings: Settings, now: datetime | None = None) -> list[Run]:
    """Runs every alert due at ``now`` that this caller claims; a failing one is logged and its
    run recorded empty (it runs again at its next time)."""
    now = now or datetime.now(UTC)
    runs = []
    for alert_id, username, spec, since in alerts.due(now):
        try:
            access = UserAccess(username, tokens_for(username, (), settings))
            found = new_documents(main, access, spec, since, now)
        except (SolrError, Exception) as exc:  # one alert's failure never stops the others
            log.warning("alert %s of %s failed: %s", alert_id, username, exc)
            continue
        mailed = bool(found) and send_alert(settings, spec, found)
        alerts.record(alert_id, now, found, mailed)
        runs.append(Run(alert_id, username, found, mailed))
    return runs
