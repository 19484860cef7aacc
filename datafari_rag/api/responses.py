"""Datafari's response JSON: ``status`` OK with ``content`` {message, documents}, or ERROR."""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify

from ..rag.errors import RagError
from ..services import get_services


def ok(message: str, documents: list[dict[str, str]]) -> Response:
    return jsonify({"status": "OK", "content": {"message": message, "documents": documents}})


def error(exc: RagError) -> Response:
    body: dict[str, Any] = {"code": exc.code, "label": exc.label}
    if exc.reason:
        body["reason"] = exc.reason
    response = jsonify({"status": "ERROR", "content": {"message": exc.message, "documents": [], "error": body}})
    if get_services().settings.errors_as_http_status:
        response.status_code = exc.code
    return response
