"""Who is asking, resolved once per request before any view runs (flaskr's ``before_app_request``).

Every endpoint needs an access except those in :data:`PUBLIC`: a new endpoint is secured unless
someone decides otherwise (fail closed). A refused identity never reaches a view: its
:class:`DatafariError` (401, 403, 503) goes straight to the error handler.
"""

from __future__ import annotations

from flask import Blueprint, g, request

from ..security import UserAccess, resolve_access
from .context import get_services

bp = Blueprint("auth", __name__)

# they serve no document and need no identity (sign-in is how one gets an identity)
PUBLIC = frozenset({"health.health", "openapi.openapi", "users.login"})


@bp.before_app_request
def load_access() -> None:
    if request.endpoint is None or request.endpoint in PUBLIC:  # no route (404/405) or a public one
        return
    g.access = resolve_access(request.headers, request.remote_addr, get_services().settings)


def current_access() -> UserAccess:
    """The access of the current request (resolved before the view ran)."""
    return g.access
