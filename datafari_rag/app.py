"""The sidecar's Flask application factory; gunicorn serves ``datafari_rag.app:create_app()``."""

from __future__ import annotations

from flask import Flask

from .api.health import bp as health_bp
from .config import Settings, load_settings
from .services import build_services


def create_app(settings: Settings | None = None) -> Flask:
    """Builds the app; nothing happens at import time, tests pass their own settings."""
    app = Flask("datafari_rag")
    settings = settings or load_settings()
    app.extensions["datafari_rag"] = build_services(settings)
    app.register_blueprint(health_bp)
    return app
