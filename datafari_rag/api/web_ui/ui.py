"""The web UI (``/ui/``): static files from ``datafari_rag/ui/static``, served as they are.

They need no identity (the page signs in through ``auth/login``, and every API call it makes is
checked like any other). Every answer carries a Content-Security-Policy of the sidecar's own
origin: no script, style or call from anywhere else, no inline script.
"""

from __future__ import annotations

import html
import json
from functools import lru_cache
from pathlib import Path

from flask import Blueprint, Response, send_from_directory

from ...registry import EXTENSION_POINTS
from ...workflows.spec import WorkflowSpec
from ..http.answers import Error
from ..http.context import get_services
from ..http.contract import JSON, Reply, endpoint, page

STATIC = Path(__file__).resolve().parents[2] / "ui" / "static"
POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

bp = Blueprint("ui", __name__)


# the entries of each extension point (registry.py), for the UI's lists: {"retrieval": [...], ...}
POINTS = html.escape(json.dumps({point: list(r.names) for point, r in EXTENSION_POINTS.items()}), quote=True)


# the workflow's one model (workflows/spec.py) as JSON schema: the form's fields, defaults and bounds
WORKFLOW_SCHEMA = html.escape(json.dumps(WorkflowSpec.model_json_schema()), quote=True)


@lru_cache(maxsize=4)
def _index(prefix: str) -> str:
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    page = page.replace("{{API_PREFIX}}", prefix).replace("{{EXTENSION_POINTS}}", POINTS)
    return page.replace("{{WORKFLOW_SCHEMA}}", WORKFLOW_SCHEMA)


@bp.after_request
def _policy(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@bp.get("/ui/")  # /ui is redirected here (Flask's strict slashes): the page's relative links need the slash
@endpoint("The web UI (docs/ui.md)", {200: page("the page")}, public=True)
def index() -> Response:
    page = _index(get_services().settings.api_prefix.rstrip("/"))
    return Response(page, mimetype="text/html", headers={"Cache-Control": "no-cache"})


@bp.get("/ui/static/<name>")
@endpoint(
    "A file of the web UI",
    {
        200: Reply("the file", {media: {} for media in ("text/javascript", "text/css", "text/html")}),
        404: Reply("no such file", {JSON: Error}),
    },
    public=True,
)
def static(name: str) -> Response:
    """A file of the UI (send_from_directory refuses any path outside the folder: 404)."""
    response = send_from_directory(STATIC, name, max_age=0)
    if name.endswith(".js"):
        response.mimetype = "text/javascript"
    return response
