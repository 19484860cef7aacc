"""Reading a request's JSON body so that no input, however hostile, becomes a server error.

Bodies over ``server.maxRequestSize`` are refused before they are read (413). A body that is not
UTF-8, not JSON, nested deeper than Python's parser can follow, or that holds a lone surrogate
(``"\\ud800"`` is valid JSON but no text) is the caller's mistake, answered with ``label``; a body
not sent as ``application/json`` is refused (415).
"""

from __future__ import annotations

import json
from typing import Any

from flask import request

from ...errors import DatafariError


def has_lone_surrogate(value: Any) -> bool:
    """True if a string anywhere in ``value`` (keys included) holds a lone UTF-16 surrogate."""
    pending = [value]
    while pending:  # iterative: a deep structure must not exhaust the stack here either
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            pending += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            pending += item
    return False


def parse_json(raw: bytes, label: str) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DatafariError(label, "The request body is not UTF-8.") from None
    try:
        value = json.loads(text)
    except RecursionError:
        raise DatafariError(label, "The request body is nested too deeply.") from None
    except ValueError:
        raise DatafariError(label, "The request body is not valid JSON.") from None
    if has_lone_surrogate(value):
        raise DatafariError(label, "The request holds a lone surrogate (such as \\ud800), which is not text.")
    return value


def json_object(label: str) -> dict[str, Any]:
    """The body as a JSON object, or :class:`DatafariError` with ``label``. A body that does not
    say it is JSON is refused with 415 before it is read: a form or ``text/plain`` post, which a
    browser sends cross-site without asking, must never act on the API."""
    if not request.is_json and request.content_length != 0:
        raise DatafariError(
            "unsupportedMediaType",
            f"The request body must be sent as application/json (it was {request.mimetype or 'not typed'}).",
        )
    raw = request.get_data(cache=True)  # over MAX_CONTENT_LENGTH: 413, nothing read
    value = parse_json(raw, label) if raw.strip() else None
    if not isinstance(value, dict):
        raise DatafariError(label, "The request body must be a JSON object.")
    return value
