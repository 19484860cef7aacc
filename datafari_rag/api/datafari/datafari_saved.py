"""Datafari's v1.0 saved searches and alerts of the signed-in user (DatafariUI's "Saved queries"
and "Alerts"), under ``users/current``: each user reads, changes and deletes only their own, and a
name or id of another user's answers 404 like one that does not exist. Answers are Datafari's
v1.0 JSON (``{"status": "OK", "content": {"savedsearches": […]}}``, ``{"alerts": […]}``; errors
``{"status": "ERROR", "content": {"code", "reason"}}`` with that HTTP status); a visitor gets 401.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from werkzeug.datastructures import MultiDict

from ...alerts.runner import check
from ...alerts.store import Alerts, AlertSpec, SavedSearches
from ...errors import DatafariError
from ...solr import SolrError
from ..http.answers import V1Error, V1Ok
from ..http.auth import current_access
from ..http.context import get_services
from ..http.contract import endpoint, json
from ..http.shapes import AlertBody, SavedSearchBody, read
from ..http.store_calls import store_call
from . import search_params
from .datafari_v1 import as_signed_in_user
from .search import solr_failure

bp = Blueprint("datafari_saved", __name__)

SAVED = "/users/current/savedsearches"
ALERTS = "/users/current/alerts"


def _replies(*errors: int) -> dict[int, Any]:
    return {200: json(V1Ok, "Datafari's v1.0 answer")} | {
        code: json(V1Error, "Datafari's v1.0 error") for code in (401, 503, *errors)
    }


def _saved() -> SavedSearches:
    return store_call(get_services().store.saved_searches)


def _alerts() -> Alerts:
    return store_call(get_services().store.alerts)


def _spec(body: AlertBody) -> AlertSpec:
    """The alert, its search run once as its user (no rows): Solr's door judges its keyword and
    filters as it judges the search page's, and the alert runs as its user later."""
    services = get_services()
    max_length = services.settings.query_max_length
    try:
        if body.keyword.strip() and body.keyword.strip() != "*:*":
            search_params.query("keyword", body.keyword, max_length)
        filters = [f for f in body.filters.split("&") if f.strip()]
        search_params.facets_and_filters(MultiDict([("fq", f) for f in filters]), max_length)
        spec = AlertSpec(body.subject, body.keyword, "&".join(filters), body.core, body.mail, body.frequency)
        check(services.main, current_access(), spec)
    except DatafariError as exc:
        raise DatafariError("alertBadRequest", exc.reason) from None
    except SolrError as exc:
        failure = solr_failure(exc)
        if failure.label != "ragBadRequest":  # Solr down, say: not the alert's fault
            raise failure from exc
        raise DatafariError("alertBadRequest", failure.reason, detail=str(exc)) from None
    return spec


@bp.get(SAVED)
@endpoint("My saved searches", _replies())
def list_saved() -> Any:
    return as_signed_in_user(lambda user: {"savedsearches": store_call(_saved().of_user, user)})


@bp.post(SAVED)
@endpoint("Save a search under a name", _replies(400, 409, 413, 415), SavedSearchBody)
def add_saved() -> Any:
    def add(user: str) -> dict[str, Any]:
        body = read(SavedSearchBody, "savedSearchBadRequest")
        return {"savedsearch": store_call(_saved().add, user, body.name.strip(), body.search)}

    return as_signed_in_user(add)


@bp.delete(f"{SAVED}/<name>")
@endpoint("Delete one of my saved searches", _replies(404))
def delete_saved(name: str) -> Any:
    def delete(user: str) -> dict[str, Any]:
        store_call(_saved().delete, user, name)
        return {"deleted": name}

    return as_signed_in_user(delete)


@bp.get(ALERTS)
@endpoint("My alerts: what each searches, how often, when it last ran and runs next", _replies())
def list_alerts() -> Any:
    return as_signed_in_user(lambda user: {"alerts": store_call(_alerts().of_user, user)})


@bp.post(ALERTS)
@endpoint("Create an alert: a search run hourly, daily or weekly as me", _replies(400, 413, 415), AlertBody)
def add_alert() -> Any:
    return as_signed_in_user(
        lambda user: {"alert": store_call(_alerts().add, user, _spec(read(AlertBody, "alertBadRequest")))}
    )


@bp.get(f"{ALERTS}/<alert_id>")
@endpoint("One of my alerts", _replies(404))
def read_alert(alert_id: str) -> Any:
    return as_signed_in_user(lambda user: {"alert": store_call(_alerts().get, user, alert_id)})


@bp.put(f"{ALERTS}/<alert_id>")
@endpoint("Change one of my alerts", _replies(400, 404, 413, 415), AlertBody)
def replace_alert(alert_id: str) -> Any:
    def replace(user: str) -> dict[str, Any]:
        spec = _spec(read(AlertBody, "alertBadRequest"))
        return {"alert": store_call(_alerts().replace, user, alert_id, spec)}

    return as_signed_in_user(replace)


@bp.delete(f"{ALERTS}/<alert_id>")
@endpoint("Delete one of my alerts and its runs", _replies(404))
def delete_alert(alert_id: str) -> Any:
    def delete(user: str) -> dict[str, Any]:
        store_call(_alerts().delete, user, alert_id)
        return {"deleted": alert_id}

    return as_signed_in_user(delete)


@bp.get(f"{ALERTS}/<alert_id>/runs")
@endpoint("What my alert's latest runs found: the new documents I may read, newest run first", _replies(404))
def alert_runs(alert_id: str) -> Any:
    return as_signed_in_user(lambda user: {"runs": store_call(_alerts().runs, user, alert_id)})
