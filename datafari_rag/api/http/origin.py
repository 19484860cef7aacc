"""Cross-site request refusal: a state-changing request (POST, PUT, PATCH, DELETE) that a browser
sent from another site's page is refused before it runs.

A bearer token is never sent by a browser on its own, but a reverse proxy that signs users in
with a cookie and names them in the trusted header is: behind it, a page elsewhere could post to
the API as the visitor. Browsers name the page's origin in ``Origin`` on every such request; it
must be this service's own (the ``Host`` or ``X-Forwarded-Host`` the request came with — a page
cannot set either on a cross-site request without a CORS preflight, which is never granted) or
one of ``server.allowedOrigins``. Clients that are not browsers send no ``Origin`` and are not
concerned.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from urllib.parse import urlsplit

from ...errors import DatafariError
from ...security.identity import RequestHeaders

SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_PORT = {"http": 80, "https": 443}


def _address(host: str, port: int | None, scheme: str | None) -> str:
    """``host[:port]``, lower case, IPv6 in brackets, a scheme's default port left out."""
    host = f"[{host}]" if ":" in host else host
    default = port is None or (port == DEFAULT_PORT[scheme] if scheme else port in DEFAULT_PORT.values())
    return host.lower() if default else f"{host.lower()}:{port}"


def _of_origin(origin: str) -> str | None:
    """The address of an origin (``scheme://host[:port]``); None for ``null`` and anything else."""
    try:
        parts = urlsplit(origin.strip())
        if parts.scheme not in DEFAULT_PORT or not parts.hostname:
            return None
        return _address(parts.hostname, parts.port, parts.scheme)
    except ValueError:  # a port that is not a number
        return None


def _of_host(host: str) -> str | None:
    """The address a ``Host`` header names."""
    try:
        parts = urlsplit(f"//{host.strip()}")
        return _address(parts.hostname, parts.port, None) if parts.hostname else None
    except ValueError:
        return None


@lru_cache(maxsize=16)
def _allowed(origins: tuple[str, ...]) -> frozenset[str | None]:
    return frozenset(_of_origin(o) for o in origins)


def cross_site(method: str, headers: RequestHeaders, allowed: Iterable[str]) -> DatafariError | None:
    """The refusal of a state-changing request from another site's page, or None."""
    origin = headers.get("Origin")
    if method.upper() in SAFE or origin is None:
        return None
    forwarded = (headers.get("X-Forwarded-Host") or "").split(",")
    own = {_of_host(h) for h in (headers.get("Host") or "", *forwarded) if h.strip()}
    address = _of_origin(origin)
    if address is not None and (address in own or address in _allowed(tuple(allowed))):
        return None
    return DatafariError(
        "accessForbidden",
        f"A request from the page of another site ({origin[:100]}) is refused; an administrator can "
        "allow that site's origin in server.allowedOrigins.",
    )
