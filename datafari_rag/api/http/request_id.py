"""Every request has an id: the caller's ``X-Request-ID`` when it is a sensible one, else a new one.
It is returned in the response's ``X-Request-ID`` and written on every log line about the request,
so an error a user reports can be found in the log."""

from __future__ import annotations

import re
import uuid

from flask import Blueprint, Response, g, request

bp = Blueprint("request_id", __name__)

HEADER = "X-Request-ID"
ACCEPTED = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


@bp.before_app_request
def assign() -> None:
    given = request.headers.get(HEADER, "")
    g.request_id = given if ACCEPTED.match(given) else uuid.uuid4().hex


@bp.after_app_request
def send(response: Response) -> Response:
    response.headers[HEADER] = current()
    return response


def current() -> str:
    """The current request's id (one is made if the request never reached the hook)."""
    if "request_id" not in g:
        g.request_id = uuid.uuid4().hex
    return g.request_id
