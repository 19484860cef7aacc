"""The sidecar's Flask application factory; gunicorn serves ``datafari_rag.app:create_app()``."""

from __future__ import annotations

from flask import Flask, Response, jsonify

from .api.health import bp as health_bp
from .api.rag import bp as rag_bp
from .api.search import bp as search_bp
from .api.stream import bp as stream_bp
from .api.update import bp as update_bp
from .config import Settings, load_settings
from .indexing.outbox import Outbox
from .llm import LlmService
from .services import build_services


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

    @app.errorhandler(404)
    def not_found(_: Exception) -> tuple[Response, int]:
        return jsonify(
            {
                "status": "ERROR",
                "content": {
                    "message": "Unknown endpoint.",
                    "documents": [],
                    "error": {"code": 404, "label": "notFound"},
                },
            }
        ), 404

    @app.errorhandler(405)
    def bad_method(_: Exception) -> tuple[Response, int]:
        return jsonify(
            {
                "status": "ERROR",
                "content": {
                    "message": "Method not allowed.",
                    "documents": [],
                    "error": {"code": 405, "label": "methodNotAllowed"},
                },
            }
        ), 405

    @app.errorhandler(Exception)
    def internal(exc: Exception) -> tuple[Response, int]:
        app.logger.exception("request failed")
        return jsonify(
            {
                "status": "ERROR",
                "content": {
                    "message": "Sorry, I met a technical issue. Please try again later, and if the problem remains, "
                    "contact an administrator.",
                    "documents": [],
                    "error": {"code": 500, "label": "ragTechnicalError"},
                },
            }
        ), 500

    return app
