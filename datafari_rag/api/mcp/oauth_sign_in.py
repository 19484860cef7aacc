"""The page where a local user signs in for an MCP client (``/oauth/sign-in``), between the
authorization server's ``/authorize`` and the client's redirect URI.

The page carries the pending authorization ``/authorize`` signed (client, redirect URI, PKCE
challenge, state): nothing a visitor types can change where the code goes. It names the client
and where the user will be sent. Credentials go through the same throttle as ``auth/login``; a
right password sends the browser to the client with a single-use code, "Deny" with
``access_denied`` (RFC 6749 §4.1.2.1). The page cannot be framed, and the product's Origin check
refuses a post from another site.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, Response, redirect, render_template_string, request
from mcp.server.auth.provider import construct_redirect_uri
from werkzeug.wrappers import Response as WerkzeugResponse

from ...errors import DatafariError
from ..admin.users import signed_in
from ..http.answers import Error
from ..http.context import get_services
from ..http.contract import HTML, Param, Reply, endpoint, json
from ..http.store_calls import store_call
from ..web_ui.ui import POLICY
from .oauth import SIGN_IN, issue_code, issuer_of, open_pending

TEMPLATE = Path(__file__).resolve().parents[2] / "ui" / "templates" / "oauth_sign_in.html"
EXPIRED = "This sign-in link is not valid or has expired: start again from your MCP client."

bp = Blueprint("oauth_sign_in", __name__)


@bp.after_request
def _policy(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", POLICY)
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@lru_cache(maxsize=1)
def _template() -> str:
    return TEMPLATE.read_text(encoding="utf-8")


def _page(status: int, pending: dict[str, Any] | None, error: str = "", username: str = "") -> Response:
    html = render_template_string(
        _template(),
        pending=pending,
        destination=_where(pending["redirect_uri"]) if pending else "",
        action=SIGN_IN,
        request_token=request.values.get("request", ""),
        error=error,
        username=username,
    )
    response = Response(html, status=status, mimetype="text/html")
    if pending:  # the browser follows the form's redirect to the client: form-action must allow it
        response.headers["Content-Security-Policy"] = POLICY.replace(
            "form-action 'self'", f"form-action 'self' {_source(pending['redirect_uri'])}"
        )
    return response


def _source(uri: str) -> str:
    """The CSP source of a redirect URI: its origin, or its scheme for an application's own."""
    parts = urlsplit(uri)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else f"{parts.scheme}:"


def _where(uri: str) -> str:
    """The redirect URI as the user should judge it: its scheme, host and port."""
    parts = urlsplit(uri)
    return f"{parts.scheme}://{parts.netloc}"


PAGE: dict[str, Any] = {HTML: {}}
PENDING = {"type": "string", "description": "the pending authorization /authorize signed"}
FORM = {  # what sign_in reads
    "type": "object",
    "required": ["request"],
    "properties": {
        "request": PENDING,
        "username": {"type": "string"},
        "password": {"type": "string"},
        "decision": {"type": "string", "enum": ["allow", "deny"]},
    },
}
EXPIRED_PAGE = Reply("a request that is not valid or has expired", PAGE)


@bp.get(SIGN_IN)
@endpoint(
    "The sign-in page of /mcp's OAuth authorization server",
    {200: Reply("the page", PAGE), 400: EXPIRED_PAGE},
    params=(Param("request", PENDING, required=True),),
    public=True,
)
def page() -> Response:
    pending = open_pending(get_services().settings, request.args.get("request", ""))
    return _page(200, pending) if pending else _page(400, None, EXPIRED)


@bp.post(SIGN_IN)
@endpoint(
    "Signs in (or denies) and sends the browser back to the MCP client",
    {
        302: Reply("to the client's redirect URI, with a code or access_denied"),
        400: EXPIRED_PAGE,
        401: Reply("a wrong username or password: the page again", PAGE),
        403: json(Error, "posted from another site's page"),
        429: Reply("too many failed sign-ins: the page again", PAGE),
        503: Reply("the user store cannot be reached: the page again", PAGE),
    },
    {"application/x-www-form-urlencoded": FORM},
    public=True,
)
def sign_in() -> WerkzeugResponse:
    services = get_services()
    pending = open_pending(services.settings, request.form.get("request", ""))
    if pending is None:
        return _page(400, None, EXPIRED)
    back, state, iss = pending["redirect_uri"], pending.get("state"), issuer_of(request.url_root)  # iss: RFC 9207
    if request.form.get("decision") == "deny":
        return redirect(construct_redirect_uri(back, error="access_denied", state=state, iss=iss), 302)
    username = request.form.get("username", "")
    try:
        user = signed_in(username, request.form.get("password", ""))
    except DatafariError as exc:
        headers = exc.headers or {}
        page = _page(exc.http_status(True), pending, exc.message + (f" {exc.reason}" if exc.reason else ""), username)
        page.headers.update(headers)
        return page
    code = store_call(issue_code, services, pending, user.username)
    return redirect(construct_redirect_uri(back, code=code, state=state, iss=iss), 302)
