"""gunicorn's own error answers in Datafari's error JSON.

Requests gunicorn refuses before the app sees them — a request line over its limit (414), too
many or too large headers (431), a malformed request (400) — are answered by gunicorn itself with
an HTML page. ``conf/gunicorn.conf.py`` installs :func:`write_json_error` in its place, so every
response of the sidecar is JSON.
"""

from __future__ import annotations

import json

from gunicorn import util

from ...errors import HTTP_LABELS, DatafariError


def json_error(status: int, reason: str) -> bytes:
    """The whole HTTP response for a request gunicorn refused."""
    error = DatafariError(HTTP_LABELS.get(status, "httpError"), reason, status)
    body = json.dumps(error.body()).encode("utf-8")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


def write_json_error(sock: object, status_int: int, reason: str, mesg: str) -> None:
    """Replaces ``gunicorn.util.write_error`` (same arguments); ``mesg`` may echo the client's
    input, so only the status and its reason phrase are sent."""
    util.write_nonblock(sock, json_error(status_int, reason))


def install() -> None:
    util.write_error = write_json_error
