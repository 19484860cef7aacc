"""Who is asking: a JWT, a header from a trusted reverse proxy, or nobody (anonymous).

A pure function of the request's headers, its remote address and the settings (no Flask here:
``api/http/auth.py`` calls it once per request). The first present wins: ``Authorization: Bearer``
(verified: signature, expiry, issuer and audience when configured), then
``security.trustedHeader`` (only from ``security.trustedProxies``), else anonymous if
``security.anonymous.allowed``. A credential that is present but wrong is refused; it never falls
back to anonymous. Usernames are normalised as Datafari does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import jwt

from ..config import Settings
from ..errors import DatafariError
from ..paths import PROJECT_ROOT
from .acl import UserAccess
from .authority import tokens_for


class RequestHeaders(Protocol):
    """A request's headers, looked up by name without regard to case (werkzeug's ``Headers``,
    ``EnvironHeaders``, or a plain dict in tests)."""

    def get(self, key: str, /) -> str | None: ...


@dataclass(frozen=True)
class Identity:
    username: str | None  # None: anonymous
    groups: tuple[str, ...] = field(default_factory=tuple)


def normalise(username: str, settings: Settings) -> str:
    if settings.strip_domain and "\\" in username:
        username = username.split("\\", 1)[1]
    if settings.append_domain and "@" not in username:
        username = f"{username}@{settings.append_domain}"
    return username


def _path(value: str) -> Path:
    path = Path(value)
    return path if path.is_absolute() else PROJECT_ROOT / path


@lru_cache(maxsize=8)
def _keys(settings: Settings) -> list[tuple[Any, list[str]]]:
    """(key, algorithms) pairs a token may be signed with, from the configuration."""
    keys: list[tuple[Any, list[str]]] = []
    asymmetric = [a.strip() for a in settings.jwt_algorithms.split(",") if a.strip() and not a.startswith("HS")]
    if settings.jwt_hs256_secret:
        keys.append((settings.jwt_hs256_secret, ["HS256"]))
    if settings.jwt_public_key_file:
        keys.append((_path(settings.jwt_public_key_file).read_text(), asymmetric))
    if settings.jwt_jwks_file:
        for jwk in jwt.PyJWKSet.from_dict(json.loads(_path(settings.jwt_jwks_file).read_text())).keys:
            keys.append((jwk, [jwk.algorithm_name] if jwk.algorithm_name in asymmetric else asymmetric))
    return keys


# Whether a token the product signed at sign-in (it carries ``ver``) is still its account's:
# (username, version) -> bool. None: not checked here (the caller checked it already).
SignIns = Callable[[str, str], bool] | None


def _from_jwt(token: str, settings: Settings, signed_in: SignIns = None) -> Identity:
    keys = _keys(settings)
    if not keys:
        raise DatafariError("authenticationFailed", "Bearer tokens are not accepted: no JWT key is configured.")
    options = {"require": ["exp"], "verify_aud": bool(settings.jwt_audience)}
    last: Exception | None = None
    for key, algorithms in keys:
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=algorithms,
                options=options,
                audience=settings.jwt_audience or None,
                issuer=settings.jwt_issuer or None,
            )
            break
        except (jwt.InvalidSignatureError, jwt.InvalidKeyError, jwt.InvalidAlgorithmError) as exc:
            last = exc  # not this key: try the next one
        except jwt.PyJWTError as exc:  # expired, wrong audience or issuer, malformed: refused
            raise DatafariError("authenticationFailed", f"Invalid token: {exc}") from exc
    else:
        raise DatafariError("authenticationFailed", f"Invalid token: {last}")
    if signed_in is not None and "ver" in claims and not signed_in(str(claims.get("sub", "")), str(claims["ver"])):
        raise DatafariError(
            "authenticationFailed",
            "This sign-in is no longer valid (the account's password or role changed, or it was removed): "
            "sign in again.",
        )
    username = claims.get(settings.jwt_username_claim) or claims.get("sub")
    if not isinstance(username, str) or not username:
        raise DatafariError("authenticationFailed", f"The token has no '{settings.jwt_username_claim}' claim.")
    groups = claims.get(settings.jwt_groups_claim, []) if settings.jwt_groups_claim else []
    if not isinstance(groups, list) or not all(isinstance(x, str) for x in groups):
        raise DatafariError(
            "authenticationFailed", f"The token's '{settings.jwt_groups_claim}' claim must be a list of strings."
        )
    return Identity(normalise(username, settings), tuple(groups))


def identify(
    headers: RequestHeaders, remote_addr: str | None, settings: Settings, signed_in: SignIns = None
) -> Identity:
    """The user behind a request; ``headers`` is a case-insensitive mapping (werkzeug's ``Headers``)."""
    authorization = headers.get("Authorization")
    if authorization is not None:  # present but empty or blank is a failed sign-in, not anonymous
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise DatafariError("authenticationFailed", "Only 'Authorization: Bearer <JWT>' is accepted.")
        return _from_jwt(token.strip(), settings, signed_in)
    if settings.trusted_header and headers.get(settings.trusted_header) is not None:
        proxies = {p.strip() for p in settings.trusted_proxies.split(",") if p.strip()}
        if remote_addr not in proxies:
            raise DatafariError("accessForbidden", f"{settings.trusted_header} is only accepted from a trusted proxy.")
        username = (headers.get(settings.trusted_header) or "").strip()
        if not username:
            raise DatafariError("authenticationFailed", f"{settings.trusted_header} is empty.")
        return Identity(normalise(username, settings))
    if not settings.anonymous_allowed:
        raise DatafariError("authenticationFailed", "Anonymous access is not allowed.")
    return Identity(None)


def resolve_access(
    headers: RequestHeaders, remote_addr: str | None, settings: Settings, signed_in: SignIns = None
) -> UserAccess:
    """The user and the tokens they hold; raises :class:`DatafariError` (401, 403, 503): fail closed."""
    who = identify(headers, remote_addr, settings, signed_in)
    tokens = frozenset() if who.username is None else tokens_for(who.username, who.groups, settings)
    return UserAccess(who.username, tokens, groups=tuple(who.groups))
