"""A local origin for DatafariUI's production build, as Datafari's web server arranges it: the
build's files under ``/datafariui/`` (its ``PUBLIC_URL``; any other path of the single-page app
gets ``index.html``) and every ``/Datafari/…`` request forwarded to the sidecar. ``user`` stands
for the single sign-on in front of Datafari: the origin names that user to the sidecar in the
trusted header, as a reverse proxy does, and names the site it serves in ``X-Forwarded-Host``."""

from __future__ import annotations

from pathlib import Path

import urllib3
from flask import Flask, Response, redirect, request, send_file
from werkzeug.security import safe_join
from werkzeug.wrappers import Response as WerkzeugResponse

# hop-by-hop headers, and those the forwarded request or response sets again
SKIPPED = {"host", "content-length", "connection", "transfer-encoding", "keep-alive", "content-encoding"}


def ui_origin(build: Path, sidecar: str, user: str | None = None, header: str = "X-Remote-User") -> Flask:
    app = Flask("datafariui-origin", static_folder=None)
    pool = urllib3.PoolManager(retries=False)

    @app.route("/Datafari/<path:rest>", methods=["GET", "POST", "PUT", "DELETE"])
    def forward(rest: str) -> Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in SKIPPED and k.lower() != header.lower()}
        headers["X-Forwarded-Host"] = request.host  # as Apache's mod_proxy does: the page's own site
        if user:
            headers[header] = user
        query = request.query_string.decode("latin-1")
        url = f"{sidecar}/Datafari/{rest}" + (f"?{query}" if query else "")
        upstream = pool.request(
            request.method, url, body=request.get_data(), headers=headers, redirect=False, timeout=120
        )
        kept = [(k, v) for k, v in upstream.headers.items() if k.lower() not in SKIPPED]
        return Response(upstream.data, status=upstream.status, headers=kept)

    @app.get("/datafariui/", defaults={"rest": ""})
    @app.get("/datafariui/<path:rest>")
    def files(rest: str) -> Response:
        found = safe_join(str(build), rest) if rest else None
        path = Path(found) if found and Path(found).is_file() else build / "index.html"
        return send_file(path)

    @app.get("/")
    def home() -> WerkzeugResponse:
        return redirect("/datafariui/")

    return app
