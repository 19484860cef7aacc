"""The sidecar as ``/mcp``'s OAuth 2.1 authorization server, for local users: what an
OAuth-capable MCP client needs to connect with nothing configured but local sign-in.

The client reads ``/mcp``'s protected-resource metadata (RFC 9728), which names this service as
its authorization server; it reads ``/.well-known/oauth-authorization-server`` (RFC 8414),
registers itself at ``/register`` (RFC 7591), and sends its user to ``/authorize`` with a PKCE
challenge. The user signs in on the product's page (``api/mcp/oauth_sign_in.py``, throttled like
``auth/login``); the client exchanges the code at ``/token`` for the same signed token
``auth/login`` gives (so password and role changes revoke it) and a refresh token.

These endpoints are the official MCP SDK's (its handlers validate every request as the RFCs
say and answer their errors); this module is the provider they call: the relational store
keeps clients and grants, a pending authorization travels to the sign-in page signed with a key
derived from ``security.jwt.hs256.secret``. It is served only when local sign-in is on and no
external issuer (``security.jwt.issuer``) is configured — then that issuer is the one named.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, cast

import jwt
from a2wsgi import ASGIMiddleware
from anyio import to_thread
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send
from werkzeug.wsgi import get_current_url

from ...config import Settings
from ...services import Services
from ...store import StoreUnavailable
from ...store.oauth import Grant, OAuthStore, TooManyClients
from ..admin.users import signed_token

PATHS = frozenset({"/.well-known/oauth-authorization-server", "/authorize", "/token", "/register"})
SIGN_IN = "/oauth/sign-in"
CODE_TTL = 120  # seconds an authorization code may wait for its exchange
PENDING_TTL = 600  # seconds the user has to sign in
PENDING_AUDIENCE = "datafari-rag/oauth-sign-in"
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def serves_oauth(settings: Settings) -> bool:
    """Whether this sidecar is the authorization server ``/mcp`` names."""
    local_sign_in = bool(settings.jwt_hs256_secret) and not settings.jwt_issuer
    return settings.mcp_enabled and settings.mcp_oauth_enabled and local_sign_in


def issuer_of(root: str) -> str:
    """The issuer for a service whose root URL is ``root``: the root without its final slash."""
    return root.rstrip("/")


def _pending_key(settings: Settings) -> bytes:
    """A key of its own for pending authorizations, so that no such token is ever a sign-in token."""
    return hmac.new(settings.jwt_hs256_secret.encode(), b"oauth pending authorization", hashlib.sha256).digest()


def seal_pending(settings: Settings, pending: dict[str, Any]) -> str:
    now = int(time.time())
    claims = {**pending, "aud": PENDING_AUDIENCE, "iat": now, "exp": now + PENDING_TTL}
    return jwt.encode(claims, _pending_key(settings), algorithm="HS256")


def open_pending(settings: Settings, token: str) -> dict[str, Any] | None:
    """The pending authorization a sign-in page carries, or None (forged, expired, not one)."""
    try:
        key = _pending_key(settings)
        claims: dict[str, Any] = jwt.decode(token, key, algorithms=["HS256"], audience=PENDING_AUDIENCE)
    except jwt.PyJWTError:
        return None
    return claims


def _same_resource(requested: str, issuer: str) -> bool:
    """RFC 8707: a token is only for this service's ``/mcp`` (or the service as a whole)."""
    return requested.rstrip("/") in (issuer, issuer + "/mcp")


class AccountRefreshToken(RefreshToken):
    """A refresh token with the account version it was issued for (a changed password or role
    refuses it)."""

    version: str | None = None


class LocalAuthorizationServer(OAuthAuthorizationServerProvider[AuthorizationCode, AccountRefreshToken, AccessToken]):
    """The provider the SDK's OAuth handlers call (``OAuthAuthorizationServerProvider``)."""

    def __init__(self, services: Services, issuer: str) -> None:
        self.services, self.settings, self.issuer = services, services.settings, issuer

    async def _store(self, call: Callable[[OAuthStore], Any]) -> Any:
        return await to_thread.run_sync(lambda: call(self.services.store.oauth()))

    async def _grant(self, kind: str, value: str, client: OAuthClientInformationFull) -> Grant | None:
        grant: Grant | None = await self._store(lambda store: store.find(kind, value, client.client_id or ""))
        return grant

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        registration = await self._store(lambda store: store.client(client_id))
        return OAuthClientInformationFull.model_validate(registration) if registration else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        registration = client_info.model_dump(mode="json", exclude_none=True)
        try:
            await self._store(lambda store: store.register(client_info.client_id or "", registration))
        except TooManyClients as exc:
            raise RegistrationError("invalid_client_metadata", str(exc)) from None

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if params.resource is not None and not _same_resource(params.resource, self.issuer):
            raise AuthorizeError("invalid_target", f"Tokens are issued for {self.issuer}/mcp only.")
        pending = {
            "client_id": client.client_id,
            "client_name": client.client_name or client.client_id,
            "redirect_uri": str(params.redirect_uri),
            "explicit": params.redirect_uri_provided_explicitly,
            "code_challenge": params.code_challenge,
            "state": params.state,
            "scopes": params.scopes or [],
            "resource": params.resource,
        }
        return f"{self.issuer}{SIGN_IN}?request={seal_pending(self.settings, pending)}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        grant = await self._grant("code", authorization_code, client)
        if grant is None:
            return None
        d = grant.details
        return AuthorizationCode(
            code=authorization_code,
            scopes=d["scopes"],
            expires_at=grant.expires_at,
            client_id=grant.client_id,
            code_challenge=d["code_challenge"],
            redirect_uri=d["redirect_uri"],
            redirect_uri_provided_explicitly=d["explicit"],
            resource=d.get("resource"),
            subject=grant.username,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        if not await self._store(lambda store: store.take("code", authorization_code.code)):
            raise TokenError("invalid_grant", "The authorization code was used already.")
        return await self._tokens(client, authorization_code.subject or "", authorization_code.scopes, None)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> AccountRefreshToken | None:
        grant = await self._grant("refresh", refresh_token, client)
        if grant is None:
            return None
        return AccountRefreshToken(
            token=refresh_token,
            client_id=grant.client_id,
            scopes=grant.details["scopes"],
            expires_at=int(grant.expires_at),
            subject=grant.username,
            version=grant.details.get("version"),
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: AccountRefreshToken, scopes: list[str]
    ) -> OAuthToken:
        """The token the SDK loaded (load_refresh_token) is taken once: a concurrent use loses."""
        if not await self._store(lambda store: store.take("refresh", refresh_token.token)):
            raise TokenError("invalid_grant", "The refresh token was used already.")
        username = refresh_token.subject or ""
        return await self._tokens(client, username, scopes or refresh_token.scopes, refresh_token.version)

    async def _tokens(
        self, client: OAuthClientInformationFull, username: str, scopes: list[str], version: str | None
    ) -> OAuthToken:
        """A sign-in token for ``username`` and a refresh token in its place, unless the account is
        gone or (for a refresh) changed its password or role since."""
        user = await to_thread.run_sync(lambda: self.services.store.users().get(username))
        if user is None or (version is not None and version != user.version):
            raise TokenError("invalid_grant", "The account changed its password or role, or was removed.")
        token, ttl = signed_token(user, self.settings, client_id=client.client_id)
        refresh = secrets.token_urlsafe(32)
        grant = Grant(
            client.client_id or "",
            username,
            {"scopes": scopes, "version": user.version},
            time.time() + self.settings.mcp_oauth_refresh_ttl,
        )
        await self._store(lambda store: store.grant("refresh", refresh, grant))
        scope = " ".join(scopes) or None
        return OAuthToken(access_token=token, token_type="Bearer", expires_in=ttl, refresh_token=refresh, scope=scope)

    async def load_access_token(self, token: str) -> AccessToken | None:
        """Never called: ``/mcp`` verifies its tokens with the sidecar's identity check (JWT,
        account version), not through the SDK's bearer middleware."""
        return None

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        """Revocation is not offered (``/revoke`` is not served): changing the password revokes."""
        if isinstance(token, RefreshToken):
            await self._store(lambda store: store.take("refresh", token.token))


def issue_code(services: Services, pending: dict[str, Any], username: str) -> str:
    """An authorization code for ``username`` answering a pending authorization."""
    code = secrets.token_urlsafe(32)
    keep = ("redirect_uri", "explicit", "code_challenge", "scopes", "resource")
    grant = Grant(pending["client_id"], username, {k: pending.get(k) for k in keep}, time.time() + CODE_TTL)
    services.store.oauth().grant("code", code, grant)
    return code


class _Unavailable:
    """The SDK's routes, a store that cannot be reached answering 503 in OAuth's error JSON."""

    def __init__(self, app: Starlette) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except StoreUnavailable:
            body = {"error": "temporarily_unavailable", "error_description": "The sign-in store cannot be reached."}
            await JSONResponse(body, status_code=503, headers={"Retry-After": "10"})(scope, receive, send)


class OAuthEndpoint:
    """The authorization server's endpoints as a WSGI application: one set of the SDK's routes per
    address the service is reached at (its issuer), all on one event loop of their own."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        issuer = issuer_of(get_current_url(environ, root_only=True))
        try:
            app = self._app(issuer)
        except ValueError as exc:  # an issuer that is neither https nor loopback
            start_response("404 Not Found", [("Content-Type", "application/json")])
            return [json.dumps({"error": "invalid_request", "error_description": str(exc)}).encode()]
        return app(environ, start_response)

    @lru_cache(maxsize=16)  # noqa: B019 - one endpoint a process, kept for the process's life
    def _app(self, issuer: str) -> WSGIApp:
        # the SDK's own settings keep the issuer exactly as given (no final slash added): RFC 8414
        # issuers are compared as strings
        documentation = issuer + "/openapi.json"
        auth = AuthSettings.model_validate(
            {"issuer_url": issuer, "service_documentation_url": documentation, "resource_server_url": None}
        )
        routes = create_auth_routes(
            LocalAuthorizationServer(self.services, issuer),
            auth.issuer_url,
            service_documentation_url=auth.service_documentation_url,
            client_registration_options=ClientRegistrationOptions(enabled=True),
        )
        asgi: Any = _Unavailable(Starlette(routes=routes))
        return cast(WSGIApp, ASGIMiddleware(asgi, loop=self._event_loop()))

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, daemon=True, name="oauth-loop").start()
            return self._loop
