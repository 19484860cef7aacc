"""Who is asking, resolved once per request before any view runs (flaskr's ``before_app_request``).

Every endpoint needs an access except those in :data:`PUBLIC`: a new endpoint is secured unless
someone decides otherwise (fail closed). A refused identity never reaches a view: its
:class:`DatafariError` (401, 403, 503) goes straight to the error handler.
"""

from __future__ import annotations

from collections.abc import Mapping

import jwt
from flask import Blueprint, g, request

from ..config import Settings
from ..errors import DatafariError
from ..security import UserAccess, resolve_access
from ..security.authority import tokens_for
from ..services import Services
from .context import get_services

bp = Blueprint("auth", __name__)

# they serve no document and need no identity (sign-in is how one gets an identity; the UI's
# files are the page that signs in)
PUBLIC = frozenset({"health.health", "openapi.openapi", "users.login", "ui.index", "ui.static"})


# a workflow's API key (``X-API-Key``) is accepted here only: it acts as the user it was made for
KEYED = frozenset({"workflows.query_workflow"})
API_KEY_HEADER = "X-API-Key"


@bp.before_app_request
def load_access() -> None:
    if request.endpoint is None or request.endpoint in PUBLIC:  # no route (404/405) or a public one
        return
    settings = get_services().settings
    if request.headers.get(API_KEY_HEADER) is not None:
        refuse_api_key(keyed=request.endpoint in KEYED)
        g.access = _key_access(request.headers[API_KEY_HEADER], settings)
        return
    g.access = resolve_access(request.headers, request.remote_addr, settings)
    check_sign_in(request.headers, get_services())


def check_sign_in(headers: Mapping[str, str], services: Services) -> None:
    """A token the product signed at sign-in (it carries ``ver``) holds only while its account
    exists with the same password and role: changing either, or deleting the account, revokes
    every token signed before. Its signature and expiry were checked by ``resolve_access``."""
    from .conversations import store_call  # imported late (cycle)

    scheme, _, token = (headers.get("Authorization") or "").strip().partition(" ")
    if scheme.lower() != "bearer":
        return
    try:
        claims = jwt.decode(token.strip(), options={"verify_signature": False})
    except jwt.PyJWTError:
        return
    if "ver" not in claims:  # signed by an identity provider: its own expiry rules
        return
    user = store_call(store_call(services.conversations.users).get, str(claims.get("sub", "")))
    if user is None or user.version != claims["ver"]:
        raise DatafariError(
            "authenticationFailed",
            "This sign-in is no longer valid (the account's password or role changed, or it was removed): "
            "sign in again.",
        )


def refuse_api_key(keyed: bool) -> None:
    """An API key where none is taken is refused (401), never ignored: the caller meant to be
    someone, and running the call as anonymous would hide the mistake."""
    if not keyed:
        raise DatafariError(
            "authenticationFailed",
            f"{API_KEY_HEADER} is accepted only when running a workflow (POST …/workflows/<id>/query); "
            "elsewhere sign in with 'Authorization: Bearer <token>'.",
        )


def _key_access(secret: str, settings: Settings) -> UserAccess:
    """The access of a workflow's API key: its user's tokens; a wrong, revoked or other workflow's
    key is refused (never anonymous)."""
    from .conversations import store_call  # the store's errors as Datafari's; imported late (cycle)

    workflow_id = (request.view_args or {}).get("workflow_id", "")
    store = store_call(get_services().conversations.workflows)
    username = store_call(store.key_user, workflow_id, secret.strip())
    if username is None:
        raise DatafariError("authenticationFailed", "This API key is not valid for this workflow.")
    return UserAccess(username, tokens_for(username, (), settings))


def current_access() -> UserAccess:
    """The access of the current request (resolved before the view ran)."""
    return g.access
