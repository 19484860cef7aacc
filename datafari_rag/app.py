"""The sidecar's Flask application factory; gunicorn serves ``datafari_rag.app:create_app()``."""

from __future__ import annotations

from flask import Flask, Response
from werkzeug.exceptions import HTTPException

from .api.health import bp as health_bp
from .api.rag import bp as rag_bp
from .api.responses import error_json
from .api.search import bp as search_bp
from .api.stream import bp as stream_bp
from .api.update import bp as update_bp
from .config import Settings, load_settings
from .indexing.outbox import Outbox
from .llm import LlmService
from .rag.errors import MESSAGES
from .security import SecurityError
from .services import build_services

LABELS = {404: "notFound", 405: "methodNotAllowed", 413: "requestTooLarge", 415: "unsupportedMediaType"}


def create_app(settings: Settings | None = None, llm: LlmService | None = None) -> Flask:
    """Builds the app; nothing happens at import time, tests pass their own settings and LLM."""
    app = Flask("datafari_rag")
    settings = settings or load_settings()
    app.extensions["datafari_rag"] = build_services(settings, llm)
    app.register_blueprint(health_bp)
    prefix = settings.api_prefix.rstrip("/")
    app.register_blueprint(rag_bp, url_prefix=prefix)
    app.register_blueprint(search_bp, url_prefix=prefix)
    app.register_blueprint(stream_bp, url_prefix=prefix)
    app.extensions["outbox"] = Outbox()
    app.register_blueprint(update_bp)
    app.register_blueprint(update_bp, url_prefix=prefix, name="prefixed_update")

    @app.errorhandler(SecurityError)
    def refused(exc: SecurityError) -> tuple[Response, int]:
        return error_json(exc.code, exc.label, exc.message, exc.reason), exc.code

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> tuple[Response, int]:
        code = exc.code or 500
        return error_json(code, LABELS.get(code, "httpError"), exc.description or exc.name), code

    @app.errorhandler(Exception)
    def internal(exc: Exception) -> tuple[Response, int]:
        app.logger.exception("request failed")
        return error_json(500, "ragTechnicalError", MESSAGES["ragTechnicalError"][1]), 500

    return app
