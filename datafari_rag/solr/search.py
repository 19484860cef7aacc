"""Every read the sidecar makes from Solr goes through this module (:func:`secured_search`, built
by :func:`_secured_request`).

It is the one place where the ACL filter is added (fail closed: there is no way to call it
without a :class:`UserAccess`), and where the parameters a caller can set are checked: the
sidecar composes its own requests, but nothing here lets a parameter that changes *what* is
searched (another collection, shards, a request handler switch) through.

What a user wrote — a query, a filter, a facet, the fields or the order of the results — is never
judged here: it travels as :func:`from_user` (``client.<name>``), and Solr's door judges it by the
one rule it holds every direct client to, on the query Solr will run (docs/security.md#one-rule).
The sidecar's own parameters are sent as they are, macros never expanded (``expandMacros=false``),
so no text of a user's becomes another parameter's value.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from ..security.acl import UserAccess, acl_params
from .client import SolrClient, SolrError

HANDLERS = ("select", "vector", "get", "spell")  # get: real-time get by id; spell: did-you-mean's candidates
# The indexer's unrestricted searches go to the handler Solr's security filter is not appended to
# (Solr's authorization keeps it to the service account).
UNFILTERED = {"select": "internal"}
FORBIDDEN = frozenset(
    {
        "qt",
        "shards",
        "shards.qt",
        "collection",
        "_route_",
        "stream.body",
        "stream.url",
        "acl_tokens",
        "acl_sep",
        "AuthenticatedUserName",
        "AuthenticatedUserGroup",
        "wt",
        "rq",
        "uf",
        "qf.user",
        "debug",
        "expandMacros",
    }
)
CLIENT = "client."  # a user's own parameter, handed to Solr's door (SecureSearchComponent.CLIENT)
DOOR_REFUSAL = " (this handler filters every search by the user's access"  # the door's 400 ends so


FORM = {"Content-Type": "application/x-www-form-urlencoded; charset=UTF-8"}
RESEND_PAUSES = (0.25, 0.75)  # seconds before each resend of a read refused while the cluster changes


def from_user(name: str, value: Any) -> tuple[str, Any]:
    """A parameter whose value a user wrote: Solr's door judges it as a direct client's ``name``
    (on the query Solr will run), then runs it."""
    return CLIENT + name, value


def refusal(exc: SolrError) -> str | None:
    """What Solr's door said when it refused a user's parameter (``'fq' may not hold…``), or None
    for any other failure."""
    text = str(exc)
    if exc.status != 400 or DOOR_REFUSAL not in text or "'" not in text:
        return None
    said = text[text.index("'") : text.index(DOOR_REFUSAL)]
    return said if said.endswith(".") else said + "."


def secured_search(
    solr: SolrClient,
    collection: str,
    handler: str,
    params: Iterable[tuple[str, Any]] | dict[str, Any],
    access: UserAccess,
    timeout: float | None = None,
) -> dict[str, Any]:
    """Runs one search on ``collection``/``handler`` restricted to what ``access`` may read."""
    path, form = _secured_request(collection, handler, params, access)
    for pause in RESEND_PAUSES:
        try:
            return solr.request("POST", path, data=form, timeout=timeout, headers=FORM)
        except SolrError as exc:
            if not exc.transient:
                raise
            time.sleep(pause)  # a read changes nothing: sent again once the cluster has settled
    return solr.request("POST", path, data=form, timeout=timeout, headers=FORM)


def _secured_request(
    collection: str, handler: str, params: Iterable[tuple[str, Any]] | dict[str, Any], access: UserAccess
) -> tuple[str, bytes]:
    """The one place the ACL filter is added: the handler's path and the form body of the request."""
    if handler not in HANDLERS:
        raise ValueError(f"unknown search handler {handler!r}")
    pairs = list(params.items()) if isinstance(params, dict) else list(params)
    for name, _ in pairs:
        # the indexer's own real-time gets name the shards of a routed collection (VectorMain)
        if name in FORBIDDEN and not (name == "shards" and access.unrestricted and handler == "get"):
            raise ValueError(f"the parameter {name!r} cannot be set")
    pairs += acl_params(access)
    pairs.append(("echoParams", "none"))  # the ACL tokens are never echoed back
    pairs.append(("expandMacros", "false"))  # no value of a user's becomes another parameter's
    if access.unrestricted:
        handler = UNFILTERED.get(handler, handler)
    # POST as a form: token lists can be long; Solr reads form bodies like query strings.
    return f"{collection}/{handler}", _form(pairs)


def _form(pairs: list[tuple[str, Any]]) -> bytes:
    return urlencode([(k, str(v)) for k, v in pairs]).encode("utf-8")
