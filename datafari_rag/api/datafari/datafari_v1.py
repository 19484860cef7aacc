"""Datafari's v1.0 endpoints that DatafariUI calls before it shows the search page, answered for
what this product is.

DatafariUI asks who the user is, the licence, whether favorites are on, the administrators'
e-mail addresses and the federated-search aggregators; without answers it shows a "Licence issue"
dialog. This product has no licence, no favorites, no configured e-mail addresses and one index:
each answer says so, in Datafari's v1.0 JSON (``{"status": "OK", "content": …}``, or ``{"status":
"ERROR", "content": {"code", "reason"}}`` with that HTTP status). What a user chooses in the page
(its language, its layout) is kept per user in the relational store (``PUT users/current``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, redirect
from werkzeug.wrappers import Response as WerkzeugResponse

from ...errors import DatafariError
from ...store import StoreUnavailable
from ...store.preferences import Preferences
from ..http.answers import V1Error, V1Ok
from ..http.auth import current_access, is_admin
from ..http.context import get_services
from ..http.contract import Param, Reply, endpoint, json
from ..http.shapes import PreferencesChange, read
from ..http.store_calls import store_call
from .rag import accept_language

bp = Blueprint("datafari_v1", __name__)

NOT_AUTHENTICATED = (
    "User is not authenticated or username could not be determined and this feature requires to be logged in."
)


def _v1(summary: str, *errors: int) -> Any:
    """A v1.0 endpoint's contract: its answer, or its error with that status."""
    replies: dict[int, Reply] = {200: json(V1Ok, "Datafari's v1.0 answer")}
    return endpoint(summary, replies | {code: json(V1Error, "Datafari's v1.0 error") for code in errors})


def as_signed_in_user(work: Callable[[str], dict[str, Any]], anonymous: str = NOT_AUTHENTICATED) -> Any:
    """Runs ``work`` for the signed-in user's name: Datafari's ``{"status": "OK", "content"}``, or
    its error JSON with the status of the refusal (a visitor: 401 saying ``anonymous``)."""
    username = current_access().username
    if username is None:
        return _error(401, anonymous)
    try:
        return jsonify({"status": "OK", "content": work(username)})
    except DatafariError as exc:
        return _error(exc.code, exc.reason or exc.message)


def _ok(content: dict[str, Any]) -> Response:
    return jsonify({"status": "OK", "content": content})


def _error(code: int, reason: str) -> tuple[Response, int]:
    return jsonify({"status": "ERROR", "content": {"code": code, "reason": reason}}), code


ADMIN_ROLE = "SearchAdministrator"  # Datafari's role that shows DatafariUI's administration link


def _saved(username: str) -> tuple[Preferences, bool]:
    """The user's saved preferences and whether they are an administrator; with the store down,
    none saved and not one (the page still opens, in the browser's language)."""
    try:
        return get_services().store.preferences().get(username), is_admin(username)
    except (StoreUnavailable, DatafariError) as exc:
        current_app.logger.warning("users/current without saved preferences: %s", exc)
        return Preferences(), username in get_services().settings.admin_names


@bp.get("/users/current")
@_v1("The user the request's identity names, with the language and layout they saved", 404)
def current_user() -> Any:
    """The user the request's identity names (JWT or trusted header), their saved language (else
    the browser's) and page layout."""
    access = current_access()
    if access.username is None:
        return _error(404, "No user currently connected.")
    saved, admin = _saved(access.username)
    return _ok(
        {
            "name": access.username,
            "roles": [ADMIN_ROLE] if admin else [],
            "lang": saved.lang or accept_language() or "en",
            "uiConfig": saved.ui_config or {},
        }
    )


@bp.put("/users/current")
@endpoint(
    "Save the signed-in user's language or page layout (DatafariUI's language switch)",
    {200: json(V1Ok, "saved"), **{code: json(V1Error, "Datafari's v1.0 error") for code in (400, 401, 503)}},
    PreferencesChange,
)
def save_current_user() -> Any:
    def save(username: str) -> dict[str, Any]:
        change = read(PreferencesChange, "userBadRequest")
        store = store_call(get_services().store.preferences)
        saved = store_call(store.save, username, change.lang, change.uiConfig)
        return {"lang": saved.lang, "uiConfig": saved.ui_config or {}}

    return as_signed_in_user(save)


@bp.get("/auth")
@endpoint(
    "DatafariUI's 'log in' link: to the identity provider's sign-in page (security.loginUrl), or this "
    "sidecar's /ui/ page with local accounts",
    {302: Reply("to the sign-in page")},
    params=(Param("callback", description="where DatafariUI wants to return (not followed: no open redirect)"),),
    public=True,
)
def login_link() -> WerkzeugResponse:
    return redirect(get_services().settings.login_url or "/ui/", 302)


@bp.get("/licence")
@_v1("No licence limits: every limit is valid")
def licence() -> Response:
    """An open-source product has no licence limits: every limit Datafari checks is "valid"."""
    return _ok({"type": "datafari-rag", "contact": "", "time": "valid", "files": "valid", "users": "valid"})


@bp.get("/status/features/favorites")
@_v1("Favorites are not offered", 401)
def favorites_status() -> Any:
    if current_access().username is None:
        return _error(401, NOT_AUTHENTICATED)
    return _ok({"activated": "false"})


@bp.get("/emails/admin")
@_v1("No administrator e-mail address is configured")
def admin_emails() -> Response:
    return _ok({"emails": {"bugs": "", "dpo": "", "feedbacks": ""}})


@bp.get("/aggregator")
@_v1("No federated search: an empty aggregator list")
def aggregators() -> Response:
    """No federated search: one local index, so no aggregator to choose."""
    return _ok({"aggregatorList": []})
