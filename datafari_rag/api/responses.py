"""Datafari's response JSON: ``status`` OK with ``content`` {message, documents}, or ERROR."""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify

from ..rag.errors import RagError
from ..services import get_services


def ok(message: str, documents: list[dict[str, str]]) -> Response:
    return jsonify({"status": "OK", "content": {"message": message, "documents": documents}})


def error_json(code: int, label: str, message: str, reason: str | None = None) -> Response:
    """Datafari's error body (HTTP 200; callers set another status where they mean it)."""
    body: dict[str, Any] = {"code": code, "label": label}
    if reason:
        body["reason"] = reason
    return jsonify({"status": "ERROR", "content": {"message": message, "documents": [], "error": body}})


def error(exc: RagError) -> Response:
    response = error_json(exc.code, exc.label, exc.message, exc.reason)
    if get_services().settings.errors_as_http_status:
        response.status_code = exc.code
    return response
