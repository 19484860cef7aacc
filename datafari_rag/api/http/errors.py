"""The one place where errors become responses: Datafari's error JSON under the status policy of
:mod:`datafari_rag.errors`, and Datafari's success JSON."""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, current_app, jsonify, request
from werkzeug.exceptions import HTTPException

from ... import metrics
from ...errors import HTTP_LABELS, DatafariError
from . import request_id
from .context import get_services

REALM = "datafari-rag"


def ok(
    message: str,
    documents: list[dict[str, str]],
    references: list[dict[str, Any]] | None = None,
    usage: dict[str, Any] | None = None,
    latency_ms: int | None = None,
    quality: dict[str, Any] | None = None,
) -> Response:
    """Datafari's success body: ``status`` OK with ``content`` {message, documents}; an answer from
    sources adds the sources it cites (``references``, ``citations``), its token ``usage``,
    ``latency_ms``, ``confidence`` and ``reasoning_steps``."""
    content: dict[str, Any] = {"message": message, "documents": documents, **(quality or {})}
    extra = {"references": references, "usage": usage, "latency_ms": latency_ms}
    content.update({k: v for k, v in extra.items() if v is not None})
    return ok_content(content)


def ok_content(content: dict[str, Any]) -> Response:
    """Datafari's success envelope around any content."""
    return jsonify({"status": "OK", "content": content})


def log_error(exc: DatafariError, cause: BaseException | None = None) -> None:
    """One log line per error a client is told about, with the request id; the upstream detail (or
    the unexpected exception behind it) goes here and nowhere else."""
    detail = exc.detail or (repr(cause) if cause is not None and cause is not exc else "")
    current_app.logger.log(
        logging.ERROR if exc.code >= 500 else logging.WARNING,
        "request %s: %s %s -> %s %s (%s)%s",
        request_id.current(),
        request.method,
        request.path,
        exc.code,
        exc.label,
        exc.reason or exc.message,
        f": {detail}" if detail else "",
        # the JSON log's fields; ``label`` is what repeated errors are rate limited by (logs.py)
        extra={
            "request_id": request_id.current(),
            "label": exc.label,
            "status": exc.code,
            "method": request.method,
            "path": request.path,
        },
    )


def error_response(exc: DatafariError) -> Response:
    """The error as Datafari's JSON, and its log line."""
    status = exc.http_status(get_services().settings.errors_as_http_status)
    log_error(exc)
    metrics.ERRORS.labels(exc.label).inc()
    response = jsonify(exc.body())
    response.status_code = status
    response.headers.extend(challenge(status))
    response.headers.extend(exc.headers)
    return response


def challenge(status: int, resource_metadata: str | None = None) -> list[tuple[str, str]]:
    """RFC 9110/6750: a 401 names the scheme that would be accepted; RFC 9728 §5.1: and where the
    protected resource's metadata is, when it has some (``/mcp``)."""
    if status != 401:
        return []
    where = f', resource_metadata="{resource_metadata}"' if resource_metadata else ""
    return [("WWW-Authenticate", f'Bearer realm="{REALM}"{where}')]


def register(app: Flask) -> None:
    """Every error of the app answers JSON: ours, Werkzeug's HTTP errors, and anything unexpected."""

    @app.errorhandler(DatafariError)
    def known(exc: DatafariError) -> Response:
        return error_response(exc)

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Response:
        code = exc.code or 500
        return error_response(DatafariError(HTTP_LABELS.get(code, "httpError"), exc.description or exc.name, code))

    @app.errorhandler(Exception)
    def unexpected(exc: Exception) -> Response:
        app.logger.exception("request %s failed", request_id.current())
        return error_response(DatafariError("httpError", code=500))
