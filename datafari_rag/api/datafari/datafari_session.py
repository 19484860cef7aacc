"""``GET /Datafari/RefreshSession``: DatafariUI asks every 15 s whether its user is still signed
in, and covers the page with "Connection is lost!" when the answer is not Datafari's.

The answer is Datafari's servlet's JSON: ``code`` 0 and ``status`` "Logged" with ``user`` and
``isAdmin`` for a request whose identity names a user; ``code`` -2 (Datafari's NOTCONNECTED) and
"Not logged" for a visitor; and which single sign-on protocols are on (here: OpenID Connect when
tokens of an identity provider are accepted, the others never). Nothing else is said: whether a
user is signed in is decided by the same identity resolution as every other request.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify

from ...errors import DatafariError
from ..http.answers import SessionState
from ..http.auth import current_access, is_admin
from ..http.context import get_services
from ..http.contract import endpoint, json, refusals

bp = Blueprint("datafari_session", __name__)

LOGGED, NOT_CONNECTED = 0, -2  # Datafari's CodesReturned.ALLOK and NOTCONNECTED


def _sso() -> dict[str, bool]:
    s = get_services().settings
    oidc = bool(s.jwt_public_key_file or s.jwt_jwks_file)  # tokens signed by an identity provider
    return {
        "keycloakEnabled": False,
        "samlEnabled": False,
        "casEnabled": False,
        "kerberosEnabled": False,
        "oidcEnabled": oidc,
    }


@bp.get("/RefreshSession")
@endpoint(
    "Whether the request's identity names a user (DatafariUI's session check, every 15 s)",
    {200: json(SessionState, "Datafari's session state"), **refusals(401, 403, 503)},
)
def refresh_session() -> Response:
    username = current_access().username
    if username is None:
        return jsonify({"code": NOT_CONNECTED, "status": "Not logged", **_sso()})
    try:
        admin = is_admin(username)
    except DatafariError:  # the store of local users is down: the configured administrators only
        admin = username in get_services().settings.admin_names
    state: dict[str, Any] = {"code": LOGGED, "status": "Logged", "user": username, "isAdmin": admin}
    return jsonify({**state, "keycloakUser": False, **_sso()})
