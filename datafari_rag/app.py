"""The sidecar's Flask application factory; gunicorn serves ``datafari_rag.app:create_app()``."""

from __future__ import annotations

import logging
import threading
import time

from flask import Flask

from . import logs
from .alerts.runner import run_due
from .api.admin.admin_settings import bp as admin_settings_bp
from .api.admin.health import bp as health_bp
from .api.admin.index_jobs import bp as index_jobs_bp
from .api.admin.metrics import bp as metrics_bp
from .api.admin.metrics import count_requests
from .api.admin.users import bp as users_bp
from .api.admin.workflows import bp as workflows_bp
from .api.datafari.ai import bp as ai_bp
from .api.datafari.assistant import bp as assistant_bp
from .api.datafari.conversations import bp as conversations_bp
from .api.datafari.datafari_fields import bp as datafari_fields_bp
from .api.datafari.datafari_saved import bp as datafari_saved_bp
from .api.datafari.datafari_session import bp as datafari_session_bp
from .api.datafari.datafari_v1 import bp as datafari_v1_bp
from .api.datafari.document_link import bp as document_link_bp
from .api.datafari.entity_suggest import bp as entity_suggest_bp
from .api.datafari.export import bp as export_bp
from .api.datafari.feedback import bp as feedback_bp
from .api.datafari.rag import bp as rag_bp
from .api.datafari.search import bp as search_bp
from .api.datafari.stream import bp as stream_bp
from .api.datafari.update import bp as update_bp
from .api.http import errors
from .api.http.auth import bp as auth_bp
from .api.http.capacity import AnswerSlots
from .api.http.openapi import bp as openapi_bp
from .api.http.request_id import bp as request_id_bp
from .api.mcp.mcp import McpEndpoint, with_mcp
from .api.mcp.oauth import OAuthEndpoint, serves_oauth
from .api.mcp.oauth_sign_in import bp as oauth_sign_in_bp
from .api.mcp.resource_metadata import bp as resource_metadata_bp
from .api.web_ui.ui import bp as ui_bp
from .config import Settings, load_settings
from .indexing.job_keeper import JobKeeper
from .live import LiveServices
from .llm import LlmService


def create_app(settings: Settings | None = None, llm: LlmService | None = None) -> Flask:
    """Builds the app; nothing happens at import time, tests pass their own settings and LLM."""
    app = Flask("datafari_rag")
    settings = settings or load_settings()
    live = LiveServices(settings, llm)
    app.extensions["live"] = live  # what requests use: the settings of now (api/http/context.py)
    app.extensions["datafari_rag"] = live.initial  # the settings at start
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_size  # larger bodies: 413, never read
    app.extensions["answer_slots"] = AnswerSlots(settings.server_threads, settings.server_reserved_threads)
    app.url_map.merge_slashes = False  # "//ai/rag" is not found, rather than redirected with an HTML page
    errors.register(app)
    logs.configure(app.logger, settings)
    app.register_blueprint(request_id_bp)  # first: every later hook and log line has the id
    app.register_blueprint(auth_bp)
    app.register_blueprint(health_bp)
    app.register_blueprint(metrics_bp)
    count_requests(app)
    app.register_blueprint(openapi_bp)
    app.register_blueprint(resource_metadata_bp)
    app.register_blueprint(oauth_sign_in_bp)
    app.register_blueprint(ui_bp)
    prefix = settings.api_prefix.rstrip("/")
    app.register_blueprint(rag_bp, url_prefix=prefix)
    app.register_blueprint(ai_bp, url_prefix=prefix)
    app.register_blueprint(search_bp, url_prefix=prefix)
    app.register_blueprint(stream_bp, url_prefix=prefix)
    app.register_blueprint(conversations_bp, url_prefix=prefix)
    app.register_blueprint(feedback_bp, url_prefix=prefix)
    app.register_blueprint(users_bp, url_prefix=prefix)
    app.register_blueprint(workflows_bp, url_prefix=prefix)
    app.register_blueprint(admin_settings_bp, url_prefix=prefix)
    app.register_blueprint(index_jobs_bp, url_prefix=prefix)
    app.register_blueprint(export_bp, url_prefix=prefix)
    app.register_blueprint(assistant_bp, url_prefix=prefix)
    # DatafariUI's start-up calls: Datafari's v1.0 API beside the v2.0 one
    v1 = prefix.removesuffix("/v2.0") + "/v1.0"
    app.register_blueprint(datafari_v1_bp, url_prefix=v1)
    app.register_blueprint(datafari_fields_bp, url_prefix=v1)
    app.register_blueprint(datafari_saved_bp, url_prefix=v1)
    app.register_blueprint(entity_suggest_bp, url_prefix=v1)
    # Datafari's web application's own servlets (the session check), under its base (/Datafari)
    datafari_base = prefix.removesuffix("/v2.0").removesuffix("/rest")
    app.register_blueprint(datafari_session_bp, url_prefix=datafari_base)
    app.register_blueprint(document_link_bp, url_prefix=datafari_base)
    app.register_blueprint(update_bp)
    app.register_blueprint(update_bp, url_prefix=prefix, name="prefixed_update")
    if settings.mcp_enabled:
        services = app.extensions["datafari_rag"]
        oauth = OAuthEndpoint(services) if serves_oauth(settings) else None
        app.wsgi_app = with_mcp(app.wsgi_app, McpEndpoint(services), oauth)  # type: ignore[method-assign,assignment]
    return app


def keep_jobs(app: object) -> threading.Thread | None:
    """Beats for this process's indexing jobs and takes over those whose worker is gone
    (``indexing/job_keeper.py``), in a daemon thread; gunicorn starts one per worker. None when
    ``app`` is not the sidecar's."""
    live = app.extensions.get("live") if isinstance(app, Flask) else None
    if live is None:
        return None
    keeper = JobKeeper(lambda: live.current().store.jobs(), lambda w: live.current().indexer_of(w))
    return keeper.start()


def schedule_alerts(app: object) -> threading.Thread | None:
    """Looks for DatafariUI alerts that are due every ``alerts.schedule.interval`` seconds, in a
    daemon thread of this process (gunicorn starts one per worker: each due alert is claimed in the
    store, so it runs once). None when the interval is 0 (``datafari-rag alerts run`` instead), or
    when ``app`` is not the sidecar's (another WSGI app served with the same gunicorn settings)."""
    live = app.extensions.get("live") if isinstance(app, Flask) else None
    if live is None:
        return None
    interval = live.initial.settings.alerts_interval
    if interval <= 0:
        return None

    def loop() -> None:
        while True:
            time.sleep(interval)
            services = live.current()
            try:
                run_due(services.store.alerts(), services.main, services.settings)
            except Exception as exc:  # the store or Solr down: the next look tries again
                logging.getLogger(__name__).warning("alerts not run: %s", exc)

    thread = threading.Thread(target=loop, name="alerts", daemon=True)
    thread.start()
    return thread
