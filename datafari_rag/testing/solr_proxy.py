"""A forwarding proxy in front of a Solr node, for tests that make Solr slow or hung on the calls
they choose: ``before(method, path, args)`` runs before a call is forwarded (a busy node answering
late), ``after(method, path)`` once Solr has done it but before it is answered (done, but answered
after the client's timeout). Credentials and the body pass through unchanged."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import urllib3
from flask import Flask, Response, request

Hook = Callable[[str, str, Mapping[str, str]], None]


def _nothing(method: str, path: str, args: Mapping[str, str]) -> None:
    return None


def solr_proxy(target: str, before: Hook = _nothing, after: Hook = _nothing) -> Flask:
    """A Flask app serving ``/solr/…`` by forwarding to ``target`` (a node's base URL, …/solr)."""
    real = urllib3.PoolManager(retries=False)
    proxy = Flask("solr-proxy")

    @proxy.route("/solr/<path:path>", methods=["GET", "POST", "PUT", "DELETE"])
    def forward(path: str) -> Response:
        before(request.method, path, request.args)
        headers = {k: v for k, v in request.headers.items() if k in ("Authorization", "Content-Type")}
        url = f"{target.rstrip('/')}/{path}?{request.query_string.decode()}"
        upstream = real.request(request.method, url, body=request.get_data(), headers=headers, timeout=60)
        after(request.method, path, request.args)
        return Response(upstream.data, status=upstream.status, content_type=upstream.headers.get("Content-Type"))

    return proxy
