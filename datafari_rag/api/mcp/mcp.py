"""The MCP server: the product's ``search``, ``vector_search``, ``rag`` and ``summarize`` as MCP
tools (the official ``mcp`` SDK, streamable HTTP at ``/mcp``, stateless, JSON responses).

Every request is identified exactly as the REST API's (JWT, trusted header, anonymous when
allowed): a refused identity gets Datafari's error JSON before the MCP server sees the request,
and each tool call runs with the calling user's access — a per-user, permission-enforcing MCP
server for Solr. The SDK's server is an ASGI application: it runs on an event loop of its own
(one thread per process, where its session manager lives) behind an ASGI-to-WSGI bridge, and
each tool runs its blocking work (Solr, the LLM) in a worker thread.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any, cast

from a2wsgi import ASGIMiddleware
from anyio import to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from werkzeug.datastructures import EnvironHeaders
from werkzeug.http import HTTP_STATUS_CODES
from werkzeug.wsgi import get_current_url

from ...errors import DatafariError
from ...prompts import LANGUAGES
from ...rag.pipeline import RagRequest
from ...retrieval import RetrievalContext
from ...retrieval.bm25 import bm25_documents
from ...retrieval.vector import vector_chunks
from ...security import UserAccess, resolve_access
from ...services import Services
from ..http.auth import API_KEY_HEADER, api_key_refused, still_signed_in
from ..http.errors import challenge
from ..http.origin import cross_site
from .oauth import PATHS as OAUTH_PATHS
from .resource_metadata import metadata_url

PATH = "/mcp"
MAX_ROWS = 50
PREVIEW = 300  # characters of a document's text in search results
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class RefusedCall(ToolError):
    """A tool call refused: the message (a label and a reason, never a trace) goes back to the
    client as the tool's error."""


def _access(services: Services, ctx: Context) -> UserAccess:
    request = ctx.request_context.request
    if request is None:  # never over HTTP: refused rather than run as nobody in particular
        raise RefusedCall("authenticationFailed: the call came without an HTTP request")
    remote = request.client.host if request.client else None
    try:
        return resolve_access(request.headers, remote, services.settings)
    except DatafariError as exc:
        raise RefusedCall(f"{exc.label}: {exc.reason or exc.message}") from None


def _text(value: str, name: str, limit: int) -> str:
    if not value.strip():
        raise RefusedCall(f"'{name}' must not be empty.")
    if len(value) > limit:
        raise RefusedCall(f"'{name}' is longer than {limit} characters.")
    return value


def _bounded(value: int, name: str) -> int:
    if not 1 <= value <= MAX_ROWS:
        raise RefusedCall(f"'{name}' must be between 1 and {MAX_ROWS}.")
    return value


def _lang(value: str | None) -> str | None:
    if value is not None and value not in LANGUAGES:
        raise RefusedCall("'lang' must be an ISO 639-1 code.")
    return value


def _run(call: Callable[[], Any]) -> Any:
    """A product call, its refusals as tool errors (the label and the reason, never a trace)."""
    try:
        return call()
    except DatafariError as exc:
        raise RefusedCall(f"{exc.label}: {exc.reason or exc.message}") from None


def build_server(services: Services) -> MCPServer:
    settings = services.settings
    server = MCPServer(
        "datafari-rag",
        instructions="Search and answers over the enterprise index; every result is filtered by the caller's rights.",
    )

    def retrieval(access: UserAccess) -> RetrievalContext:
        pipeline = services.pipeline
        return RetrievalContext(
            services.main, services.vectors, pipeline.retrieval_params, access, embed=pipeline.embed
        )

    @server.tool(description="Keyword search (BM25) of the documents the caller may read.")
    async def search(query: str, ctx: Context, rows: int = 10) -> dict[str, Any]:
        access = _access(services, ctx)
        query, rows = _text(query, "query", settings.query_max_length), _bounded(rows, "rows")
        found = await to_thread.run_sync(lambda: _run(lambda: bm25_documents(retrieval(access), query, rows)))
        return {"documents": [{"id": d.id, "title": d.title, "url": d.url, "text": d.content[:PREVIEW]} for d in found]}

    @server.tool(description="Semantic search: the passages nearest to the query, among documents the caller may read.")
    async def vector_search(query: str, ctx: Context, top_k: int = 10) -> dict[str, Any]:
        access = _access(services, ctx)
        query, top_k = _text(query, "query", settings.query_max_length), _bounded(top_k, "top_k")
        found = await to_thread.run_sync(lambda: _run(lambda: vector_chunks(retrieval(access), query, top_k)))
        return {"passages": [{"id": d.id, "title": d.title, "url": d.url, "text": d.content} for d in found]}

    @server.tool(description="An answer to a question from the documents the caller may read, with its sources.")
    async def rag(question: str, ctx: Context, lang: str | None = None) -> dict[str, Any]:
        access = _access(services, ctx)
        request = RagRequest(query=_text(question, "question", settings.query_max_length), lang=_lang(lang))
        answer = await to_thread.run_sync(lambda: _run(lambda: services.pipeline.answer(request, access)))
        documents = [{k: d[k] for k in ("id", "title", "url")} for d in answer.documents]
        return {
            "answer": answer.message,
            "references": answer.references,
            "documents": documents,
            "usage": answer.usage,
        }

    @server.tool(description="A summary of one document the caller may read, by its id.")
    async def summarize(id: str, ctx: Context, lang: str | None = None) -> dict[str, Any]:
        access = _access(services, ctx)
        doc_id, language = _text(id, "id", 2048), _lang(lang)
        summary = await to_thread.run_sync(lambda: _run(lambda: services.pipeline.summarize(doc_id, language, access)))
        return {"summary": summary}

    return server


class McpEndpoint:
    """``/mcp`` as a WSGI application, built at its first request (most processes never serve
    one), refusing unidentified callers before the MCP server sees them."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self._app: WSGIApp | None = None
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        headers = EnvironHeaders(environ)
        try:
            refusal = cross_site(environ.get("REQUEST_METHOD", "GET"), headers, self.services.settings.origins)
            if refusal is not None:  # MCP's own rule too: a browser page of another site is refused
                raise refusal
            if headers.get(API_KEY_HEADER) is not None:
                raise api_key_refused()
            resolve_access(headers, environ.get("REMOTE_ADDR"), self.services.settings, still_signed_in(self.services))
        except DatafariError as exc:
            status = exc.http_status(True)
            start_response(
                f"{status} {HTTP_STATUS_CODES.get(status, 'Error')}",
                [
                    ("Content-Type", "application/json"),
                    *challenge(status, metadata_url(get_current_url(environ, root_only=True))),
                ],
            )
            return [json.dumps(exc.body()).encode()]
        return self._bridge()(environ, start_response)

    def _bridge(self) -> WSGIApp:
        with self._lock:
            if self._app is None:
                self._app = _start(build_server(self.services))
            return self._app


def _start(server: MCPServer) -> WSGIApp:
    """The server's ASGI app on an event loop of its own, its session manager running there."""
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        json_response=True,
        stateless_http=True,
        # callers are identified by credentials, as on the REST API, not by the Host they name
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True, name="mcp-loop").start()
    ready: Future[None] = Future()

    async def keep_running() -> None:
        async with server.session_manager.run():
            ready.set_result(None)
            await asyncio.Event().wait()

    asyncio.run_coroutine_threadsafe(keep_running(), loop)
    ready.result(timeout=30)
    asgi: Any = app
    return cast(WSGIApp, ASGIMiddleware(asgi, loop=loop))


def with_mcp(app: WSGIApp, endpoint: WSGIApp, oauth: WSGIApp | None = None) -> WSGIApp:
    """``/mcp`` to the MCP endpoint, the authorization server's paths to ``oauth`` (when the
    sidecar is one), everything else to the Flask app."""

    def dispatch(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == PATH or path.startswith(PATH + "/"):
            return endpoint(environ, start_response)
        if oauth is not None and path in OAUTH_PATHS:
            return oauth(environ, start_response)
        return app(environ, start_response)

    return dispatch
