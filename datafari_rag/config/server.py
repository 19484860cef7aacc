"""The sidecar's HTTP server: where it listens, its workers, health checks, logs, metrics, MCP."""

from __future__ import annotations

from dataclasses import dataclass

from .keys import SERVER, key


@dataclass(frozen=True)
class ServerSettings:
    """The sidecar's server (server.*, health.*, logs.*, mcp.*)."""

    server_host: str = key(SERVER, "server.host", "127.0.0.1", "Where the sidecar listens.")
    server_port: int = key(SERVER, "server.port", 8080, "The sidecar's port.")
    allowed_origins: str = key(
        SERVER,
        "server.allowedOrigins",
        "",
        "Origins (scheme://host[:port], comma-separated) whose pages may send POST, PUT, PATCH and "
        "DELETE besides this service's own (its Host or X-Forwarded-Host): the search UI's site "
        "when it is served from another address. Other sites' pages are refused (403).",
    )
    health_interval: float = key(
        SERVER,
        "health.interval",
        5.0,
        "Seconds between the background checks of Solr, the collections, the model store, the "
        "agent and the relational store that /health and /health/ready report.",
        minimum=0.1,
        maximum=300,
    )
    health_timeout: float = key(
        SERVER,
        "health.timeout",
        3.0,
        "Seconds one background check may take, every part together (a part not answered in time is SLOW: "
        "not a failure while Solr serves requests or answers a patient look).",
        minimum=0.1,
        maximum=60,
    )
    health_failures: int = key(
        SERVER,
        "health.failures",
        2,
        "Consecutive failed background checks before /health/ready answers 503 (one failure is a "
        "blip; a slow part is no failure while Solr serves); an open Solr circuit answers 503 at once.",
        minimum=1,
        maximum=100,
    )
    logs_format: str = key(
        SERVER,
        "logs.format",
        "json",
        "The sidecar's log lines: json (one object a line: time, level, logger, message, and the "
        "request id, label, status, method and path of an error) or text.",
        choices=("json", "text"),
    )
    logs_errors_per_label: int = key(
        SERVER,
        "logs.errorsPerLabel",
        5,
        "Errors of one label logged per logs.window at most; the next one logged says how many were left out.",
        minimum=1,
    )
    logs_window: float = key(
        SERVER, "logs.window", 60.0, "Seconds of the per-label error log limit.", minimum=0.1, maximum=3600
    )
    metrics_enabled: bool = key(
        SERVER,
        "metrics.enabled",
        True,
        "Serve Prometheus metrics at GET /metrics (no identity needed: counts and times, never a "
        "document, a query or a user name; keep it to the monitoring network).",
    )
    stream_debug: bool = key(
        SERVER,
        "stream.debug",
        False,
        "ai/stream as Server-Sent Events adds debug events: the rewritten queries, each stage's time.",
    )
    mcp_enabled: bool = key(
        SERVER,
        "mcp.enabled",
        True,
        "Serve the MCP tools (search, vector_search, rag, summarize) at /mcp, with the REST API's identity and ACLs.",
    )
    mcp_oauth_enabled: bool = key(
        SERVER,
        "mcp.oauth.enabled",
        True,
        "With local sign-in (security.jwt.hs256.secret) and no security.jwt.issuer, the sidecar is /mcp's OAuth "
        "authorization server: MCP clients register, send their user to sign in, and get tokens.",
    )
    mcp_oauth_refresh_ttl: int = key(
        SERVER,
        "mcp.oauth.refreshTokenTtl",
        30 * 24 * 3600,
        "Seconds a refresh token of /mcp's authorization server is valid (each use replaces it).",
        minimum=60,
        maximum=365 * 24 * 3600,
    )
    mcp_oauth_max_clients: int = key(
        SERVER,
        "mcp.oauth.maxClients",
        1000,
        "MCP clients that may register with the authorization server (RFC 7591); more are refused.",
        minimum=1,
        maximum=1000000,
    )
    server_workers: int = key(SERVER, "server.workers", 2, "gunicorn worker processes (one per core).", minimum=1)
    server_threads: int = key(
        SERVER,
        "server.threads",
        72,
        "Threads per worker: every request of a burst waiting on Solr or the LLM holds one "
        "(72: 64 answers at once, and server.reservedThreads for the rest).",
        minimum=1,
    )
    server_reserved_threads: int = key(
        SERVER,
        "server.reservedThreads",
        8,
        "Threads of each process kept for searches, health checks and updates: answers, which wait on "
        "the LLM, may hold the others, and get a busy error beyond them, so a slow LLM never makes a "
        "search wait.",
        minimum=1,
    )
    server_graceful_timeout: float = key(
        SERVER,
        "server.gracefulTimeout",
        0.0,
        "Seconds a stopping sidecar lets the answers under way finish (a stream to its last event, its "
        "turn recorded) before its workers are killed; 0: llm.deadline + 15 (the answer's own bound, "
        "retrieval before it and the recording after). A container's stop grace must be longer.",
        minimum=0,
    )
    server_access_log: str = key(
        SERVER,
        "server.accessLog",
        "",
        "gunicorn access log: empty: none (0.6 ms of CPU a request), -: stdout, or a file.",
    )
    server_control_socket: str = key(
        SERVER,
        "server.controlSocket",
        "",
        "gunicorn control socket; empty: var/run/sidecar-<port>.ctl, none: no socket.",
    )
    max_body_size: int = key(
        SERVER,
        "server.maxRequestSize",
        16 * 1024 * 1024,
        "Largest request body accepted, in bytes (larger: 413, never read).",
        minimum=1024,
    )
    api_prefix: str = key(SERVER, "server.api.prefix", "/Datafari/rest/v2.0", "Prefix of Datafari's REST API.")
    errors_as_http_status: bool = key(
        SERVER,
        "server.errors.httpStatus",
        False,
        "Send Datafari's error code as the HTTP status too (Datafari answers 200; keep false for Datafari clients).",
    )

    @property
    def origins(self) -> list[str]:
        """``server.allowedOrigins`` as a list."""
        return [o.strip() for o in self.allowed_origins.split(",") if o.strip()]
