"""The floor under any gunicorn sidecar: a WSGI app that forwards its query string to the Solr
handler named by its path (``/FileShare/select``) with the product's Solr client and returns
Solr's bytes, with no validation, no identity, no ACL composition and no Flask. Served exactly
like the sidecar (``conf/gunicorn.conf.py``), so ``bench/solr_overhead.py`` can show, in the same
run, how much of the sidecar's cost is the extra HTTP hop itself and how much its own code.

Never part of the product: it filters nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from datafari_rag.config import load_settings
from datafari_rag.solr import SolrClient
from datafari_rag.solr.search import FORM
from datafari_rag.solr.service_account import credentials

_settings = load_settings()
_solr = SolrClient(_settings.solr_url, auth=credentials(_settings))  # the sidecar's account, as the sidecar


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    query = environ.get("QUERY_STRING", "")
    if not query:  # the readiness probe
        start_response("204 No Content", [])
        return []
    body = _solr.request_bytes("POST", environ["PATH_INFO"], data=query.encode("latin-1"), headers=FORM)
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]
