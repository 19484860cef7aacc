"""Datafari's v1.0 endpoints that DatafariUI calls before it shows the search page, answered for
what this product is.

DatafariUI asks who the user is, the licence, whether favorites are on, the administrators'
e-mail addresses and the federated-search aggregators; without answers it shows a "Licence issue"
dialog. This product has no user database, no licence, no favorites, no configured e-mail
addresses and one index: each answer says so, in Datafari's v1.0 JSON (``{"status": "OK",
"content": …}``, or ``{"status": "ERROR", "content": {"code", "reason"}}`` with that HTTP status).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify

from .answers import V1Error, V1Ok
from .auth import current_access
from .contract import Reply, endpoint, json
from .rag import accept_language

bp = Blueprint("datafari_v1", __name__)

NOT_AUTHENTICATED = (
    "User is not authenticated or username could not be determined and this feature requires to be logged in."
)


def _v1(summary: str, *errors: int) -> Any:
    """A v1.0 endpoint's contract: its answer, or its error with that status."""
    replies: dict[int, Reply] = {200: json(V1Ok, "Datafari's v1.0 answer")}
    return endpoint(summary, replies | {code: json(V1Error, "Datafari's v1.0 error") for code in errors})


def _ok(content: dict[str, Any]) -> Response:
    return jsonify({"status": "OK", "content": content})


def _error(code: int, reason: str) -> tuple[Response, int]:
    return jsonify({"status": "ERROR", "content": {"code": code, "reason": reason}}), code


@bp.get("/users/current")
@_v1("The user the request's identity names", 404)
def current_user() -> Any:
    """The user the request's identity names (JWT or trusted header); no roles, no saved UI."""
    access = current_access()
    if access.username is None:
        return _error(404, "No user currently connected.")
    return _ok({"name": access.username, "roles": [], "lang": accept_language() or "en", "uiConfig": {}})


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
