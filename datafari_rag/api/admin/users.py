"""Local users over REST: sign-in, and the accounts an administrator manages.

- ``POST …/auth/login`` {username, password} → a signed token (HS256 with
  ``security.jwt.hs256.secret``, ``users.tokenTtl`` seconds) that the sidecar's JWT identity
  accepts like any other: ``Authorization: Bearer <token>``. A wrong password and an unknown user
  get the same answer.
- ``GET|POST …/users``, ``PUT|DELETE …/users/<username>``: administrators only (a local user with
  ``admin``); a password hash is never returned.
"""

from __future__ import annotations

import time
from typing import Any

import jwt
from flask import Blueprint, Response, request

from ...config import Settings
from ...errors import DatafariError
from ...store.users import User, UserStore
from ..http.answers import UserAnswer
from ..http.auth import current_access, is_admin
from ..http.context import get_services
from ..http.contract import endpoint, json, refusals
from ..http.errors import ok_content
from ..http.shapes import Login, NewUser, UserChange, read
from ..http.store_calls import store_call

bp = Blueprint("users", __name__)


def _ok(content: dict[str, Any], status: int = 200) -> tuple[Response, int]:
    return ok_content(content), status


def _users() -> UserStore:
    return store_call(get_services().store.users)


def require_admin(what: str = "Managing users") -> str:
    """The username of the signed-in administrator: a local user with ``admin``, or a username of
    ``security.admins`` (whatever identity provider signed it in); anyone else is refused."""
    username = current_access().username
    if username is None:
        raise DatafariError("authenticationFailed", f"{what} needs a signed-in administrator.")
    if not is_admin(username):
        raise DatafariError("accessForbidden", f"{what} is for administrators.")
    return username


def _admin() -> UserStore:
    require_admin()
    return _users()


def token_for(user: User) -> tuple[str, int]:
    return signed_token(user, get_services().settings)


def signed_token(user: User, s: Settings, **extra: Any) -> tuple[str, int]:
    """A token for a local user, as the sidecar's JWT identity accepts it; ``extra`` claims are
    added (the OAuth client it was issued to)."""
    if not s.jwt_hs256_secret:
        raise DatafariError("loginNotEnabled", "Local sign-in needs security.jwt.hs256.secret.")
    now = int(time.time())
    claims: dict[str, Any] = {s.jwt_username_claim: user.username, "iat": now, "exp": now + s.users_token_ttl}
    claims |= {"sub": user.username, "admin": user.admin, "ver": user.version, **extra}
    if s.jwt_issuer:
        claims["iss"] = s.jwt_issuer
    if s.jwt_audience:
        claims["aud"] = s.jwt_audience
    return jwt.encode(claims, s.jwt_hs256_secret, algorithm="HS256"), s.users_token_ttl


def signed_in(username: object, password: object) -> User:
    """The local user these credentials are, through the sign-in throttle: a wrong password and an
    unknown user are the same ``loginFailed``; past the throttle's limits, ``loginThrottled``."""
    if not get_services().settings.jwt_hs256_secret:
        raise DatafariError("loginNotEnabled", "Local sign-in needs security.jwt.hs256.secret.")
    address = request.remote_addr
    throttle = store_call(get_services().store.sign_ins)
    name = username if isinstance(username, str) else ""
    wait = store_call(throttle.wait, name, address)
    if wait:
        raise DatafariError("loginThrottled", f"Try again in {wait} s.", headers={"Retry-After": str(wait)})
    user = store_call(_users().verify, username, password)
    if user is None:
        store_call(throttle.failed, name, address)
        raise DatafariError("loginFailed")
    store_call(throttle.succeeded, name)
    return user


@bp.post("/auth/login")
@endpoint(
    "Sign in with a local account: a Bearer token for every other endpoint",
    {200: json(UserAnswer, "the token"), **refusals(400, 401, 413, 415, 422, 429, 503)},
    Login,
    public=True,
)
def login() -> tuple[Response, int]:
    body = read(Login, "userBadRequest")
    user = signed_in(body.username, body.password)
    token, ttl = token_for(user)
    return _ok({"token": token, "token_type": "Bearer", "expires_in": ttl, "user": user.as_dict()})


@bp.get("/users")
@endpoint("Local users (administrators)", {200: json(UserAnswer, "the users"), **refusals(401, 403, 503)})
def list_users() -> tuple[Response, int]:
    return _ok({"users": [u.as_dict() for u in store_call(_admin().list)]})


@bp.post("/users")
@endpoint(
    "Create a local user (administrators)",
    {201: json(UserAnswer, "the user"), **refusals(400, 401, 403, 409, 413, 415, 503)},
    NewUser,
)
def create_user() -> tuple[Response, int]:
    store = _admin()
    body = read(NewUser, "userBadRequest")
    user = store_call(store.create, body.username, body.password, body.admin)
    return _ok({"user": user.as_dict()}, 201)


@bp.put("/users/<username>")
@endpoint(
    "Change a local user's password or role (administrators)",
    {200: json(UserAnswer, "done"), **refusals(400, 401, 403, 404, 413, 415, 503)},
    UserChange,
)
def update_user(username: str) -> tuple[Response, int]:
    store = _admin()
    body = read(UserChange, "userBadRequest")
    user = store_call(store.update, username, body.password, body.admin)
    return _ok({"user": user.as_dict()})


@bp.delete("/users/<username>")
@endpoint(
    "Delete a local user (administrators)",
    {200: json(UserAnswer, "done"), **refusals(400, 401, 403, 404, 413, 415, 503)},
)
def delete_user(username: str) -> tuple[Response, int]:
    store_call(_admin().delete, username)
    return _ok({"deleted": username})
