"""Who is asking, resolved once per request before any view runs (flaskr's ``before_app_request``).

Every endpoint needs an access except those whose contract says ``public``: a new endpoint is
secured unless someone decides otherwise (fail closed). A refused identity never reaches a view: its
:class:`DatafariError` (401, 403, 503) goes straight to the error handler.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Blueprint, current_app, g, request

from ...config import Settings
from ...errors import DatafariError
from ...security import UserAccess, resolve_access
from ...security.authority import tokens_for
from ...services import Services
from .context import get_services
from .contract import contract_of
from .origin import cross_site
from .store_calls import store_call

bp = Blueprint("auth", __name__)


def is_public(endpoint: str | None) -> bool:
    """Whether the endpoint's view declares ``public`` (api/http/contract.py): it serves no document and
    needs no identity (sign-in is how one gets one; the UI's files are the page that signs in).
    A view without a contract is not public."""
    view = current_app.view_functions.get(endpoint or "")
    contract = contract_of(view) if view is not None else None
    return contract is not None and contract.public


# a workflow's API key (``X-API-Key``) is accepted here only: it acts as the user it was made for
KEYED = frozenset({"workflows.query_workflow"})
API_KEY_HEADER = "X-API-Key"


@bp.before_app_request
def load_access() -> None:
    refusal = cross_site(request.method, request.headers, get_services().settings.origins)
    if refusal is not None:  # first: a page of another site gets nothing run, sign-in included
        raise refusal
    if request.endpoint is None or is_public(request.endpoint):  # no route (404/405) or a public one
        return
    settings = get_services().settings
    if request.headers.get(API_KEY_HEADER) is not None:
        if request.endpoint not in KEYED:
            raise api_key_refused()
        g.access = _key_access(request.headers[API_KEY_HEADER], settings)
        return
    g.access = resolve_access(request.headers, request.remote_addr, settings, still_signed_in(get_services()))


def still_signed_in(services: Services) -> Callable[[str, str], bool]:
    """Whether a token the product signed at sign-in is still its account's: the account exists
    with the same password and role (``User.version``); changing either, or deleting the account,
    revokes every token signed before."""

    def check(username: str, version: str) -> bool:
        user = store_call(store_call(services.store.users).get, username)
        return user is not None and user.version == version

    return check


def api_key_refused() -> DatafariError:
    """An API key where none is taken is refused (401), never ignored: the caller meant to be
    someone, and running the call as anonymous would hide the mistake."""
    return DatafariError(
        "authenticationFailed",
        f"{API_KEY_HEADER} is accepted only when running a workflow (POST …/workflows/<id>/query); "
        "elsewhere sign in with 'Authorization: Bearer <token>'.",
    )


def _key_access(secret: str, settings: Settings) -> UserAccess:
    """The access of a workflow's API key: its user's tokens; a wrong, revoked or other workflow's
    key is refused (never anonymous)."""

    workflow_id = (request.view_args or {}).get("workflow_id", "")
    store = store_call(get_services().store.workflows)
    username = store_call(store.key_user, workflow_id, secret.strip())
    if username is None:
        raise DatafariError("authenticationFailed", "This API key is not valid for this workflow.")
    return UserAccess(username, tokens_for(username, (), settings))


def current_access() -> UserAccess:
    """The access of the current request (resolved before the view ran)."""
    return g.access


def is_admin(username: str | None) -> bool:
    """A name of ``security.admins``, or a local user with ``admin``."""
    if username is None:
        return False
    if username in get_services().settings.admin_names:
        return True
    user = store_call(store_call(get_services().store.users).get, username)
    return user is not None and user.admin
