"""``GET /metrics``, and the per-request counting behind it: every request's endpoint, method,
status and time to first byte (the route's name, never its path, so that ids and typos do not
make new series); Solr's circuit as this process sees it after each request."""

from __future__ import annotations

import time

from flask import Blueprint, Flask, Response, g, request

from ... import metrics
from ..http.context import get_services
from ..http.contract import Reply, endpoint

bp = Blueprint("metrics", __name__)


TEXT = {"text/plain": {"type": "string"}}


@bp.get("/metrics")
@endpoint(
    "Prometheus metrics of every worker: requests, latency, errors per label, the circuit, answer slots, LLM calls "
    "and tokens, embedding calls, indexing jobs",
    {200: Reply("Prometheus' text format", TEXT), 404: Reply("metrics.enabled is false", TEXT)},
    public=True,
)
def scrape() -> Response:
    if not get_services().settings.metrics_enabled:
        return Response("metrics.enabled is false\n", status=404, content_type="text/plain")
    body, content_type = metrics.exposition()
    return Response(body, content_type=content_type)


def count_requests(app: Flask) -> None:
    """Hooks that time and count every request of ``app``."""

    @app.before_request
    def began() -> None:
        g.metrics_began = time.monotonic()

    @app.after_request
    def answered(response: Response) -> Response:
        endpoint = request.endpoint or "none"
        metrics.REQUESTS.labels(endpoint, request.method, str(response.status_code)).inc()
        if "metrics_began" in g:
            metrics.REQUEST_SECONDS.labels(endpoint).observe(time.monotonic() - g.metrics_began)
        breaker = get_services().solr.breaker
        metrics.CIRCUIT_OPEN.set(1 if breaker is not None and breaker.is_open else 0)
        return response
