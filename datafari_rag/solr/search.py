"""Every read the sidecar makes from Solr goes through this module (:func:`secured_search`, built
by :func:`_secured_request`).

It is the one place where the ACL filter is added (fail closed: there is no way to call it
without a :class:`UserAccess`), and where the parameters a caller can set are checked: the
sidecar composes its own requests, but nothing here lets a parameter that changes *what* is
searched (another collection, shards, a request handler switch) through.
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
    }
)


FORM = {"Content-Type": "application/x-www-form-urlencoded; charset=UTF-8"}
RESEND_PAUSES = (0.25, 0.75)  # seconds before each resend of a read refused while the cluster changes


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
    if access.unrestricted:
        handler = UNFILTERED.get(handler, handler)
    # POST as a form: token lists can be long; Solr reads form bodies like query strings.
    return f"{collection}/{handler}", _form(pairs)


def _form(pairs: list[tuple[str, Any]]) -> bytes:
    return urlencode([(k, str(v)) for k, v in pairs]).encode("utf-8")
