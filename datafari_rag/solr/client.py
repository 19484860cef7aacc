"""One HTTP client for Solr: timeouts, Basic auth and Solr's error messages in one place.

It speaks to Solr through urllib3, the connection pool under ``requests``, used directly: every
RAG request and every proxied search makes at least one Solr call, and requests' per-call
machinery (settings merging, hooks, cookies) cost 0.5 ms of CPU and 0.8 ms of latency per call
here (measured on the local runtime), a tenth of a whole BM25 search.
"""

from __future__ import annotations

import copy
import json as jsonlib
from typing import Any
from urllib.parse import urlencode, urlsplit

import urllib3

from .breaker import CircuitBreaker, Watcher

POOL_SIZE = 128  # connections kept open to Solr: every concurrent request of a busy process
CONNECT_TIMEOUT = 2.0  # seconds: a Solr on the network connects in milliseconds, or is not there


# What a node says while its view of the cluster changes under it (a node lost, its ZooKeeper
# session expiring, a new leader elected): the same read sent a moment later is answered.
CLUSTER_CHANGING = (
    "is neither a live node",  # 403: the replica chosen went from live_nodes between choice and check
    "no servers hosting shard",
    "ConnectionLoss",
    "Cannot talk to ZooKeeper",
    # 500: a shard stayed silent for the shard handler's socketTimeout (its node froze or was cut
    # off the network, its connections open); by the next try ZooKeeper has declared it gone
    "Idle timeout",
    "Total timeout",
)


class SolrError(RuntimeError):
    """Solr answered with an error, or could not be reached; ``status`` is 0 when unreachable."""

    def __init__(self, status: int, message: str, timed_out: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.timed_out = timed_out  # reached, but no answer in time: slow, not refusing

    @property
    def transient(self) -> bool:
        """Solr answered, but only because its cluster is changing: a read may be sent again.
        Unreachable (0) is not: every node was already tried."""
        if self.status in (503, 510):
            return True
        return self.status in (403, 500) and any(mark in str(self) for mark in CLUSTER_CHANGING)


class SolrClient:
    """A thin JSON client over Solr's HTTP API, shared by every part of the sidecar.

    ``base_url`` may name several nodes of one SolrCloud, comma-separated: requests go to the
    first that answers, and a node that cannot be connected to (killed, restarting) is passed
    over for the next one, which then stays first; a node that answers 503 (unavailable: one that
    lost ZooKeeper refuses writes) is moved last, for the caller's next try. A node that answers
    slowly is not: sending a slow request again elsewhere would double the load that made it slow."""

    def __init__(
        self,
        base_url: str,
        timeout: float = 30.0,
        auth: tuple[str, str] | None = None,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        # one list, shared with the probe() views: a node found dead is passed over by every view
        self.urls = [u.strip().rstrip("/") for u in base_url.split(",") if u.strip()]
        self.timeout = timeout
        self.breaker: CircuitBreaker | Watcher | None = (
            breaker  # None: every request goes to Solr (the CLI's and the runtime's own clients)
        )
        # Solr is reached directly: no proxy from the environment, no retries behind our back
        self.pool = urllib3.PoolManager(maxsize=POOL_SIZE, block=False, retries=False)
        self.auth = auth
        self.headers = urllib3.make_headers(basic_auth=":".join(auth)) if auth else {}

    @property
    def base_url(self) -> str:
        """The node requests go to now."""
        return self.urls[0]

    def probe(self) -> SolrClient:
        """The same Solr (pool, credentials) for health checks: fails at once while the circuit is
        open, never counts toward opening it (:class:`.breaker.Watcher`)."""
        view = copy.copy(self)
        view.breaker = Watcher(self.breaker) if self.breaker is not None else None
        return view

    def _send(
        self,
        method: str,
        path: str,
        params: Any = None,
        json: Any = None,
        data: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> urllib3.BaseHTTPResponse:
        """Sends one request; a Solr error status or an unreachable Solr raises :class:`SolrError`."""
        query = list(params.items()) if isinstance(params, dict) else list(params or [])
        query.append(("wt", "json"))
        target = f"{path.lstrip('/')}?{urlencode(query)}"
        sent = {**self.headers, **(headers or {})}
        if json is not None:
            data = jsonlib.dumps(json).encode("utf-8")
            sent["Content-Type"] = "application/json"
        if self.breaker is not None and not self.breaker.allow():
            raise SolrError(0, f"Solr at {self.base_url} is not answering (circuit open; retried shortly)")
        seconds = timeout or self.timeout
        wait = urllib3.Timeout(connect=min(CONNECT_TIMEOUT, seconds), read=seconds)
        response: urllib3.BaseHTTPResponse | None = None
        failure: urllib3.exceptions.HTTPError | None = None
        for node in list(self.urls):
            try:
                response = self.pool.request(method, f"{node}/{target}", body=data, headers=sent, timeout=wait)
                break
            except (urllib3.exceptions.ConnectTimeoutError, urllib3.exceptions.ProtocolError) as exc:
                # not connected, or the connection died under the request (a node killed): the
                # next node may answer (Solr's writes by id and its reads are safe to send again)
                failure = exc
                if node == self.urls[0] and len(self.urls) > 1:
                    self.urls.append(self.urls.pop(0))
            except urllib3.exceptions.HTTPError as exc:
                failure = exc  # reached, then too slow: not sent again elsewhere
                break
        if response is None:
            if self.breaker is not None:
                self.breaker.failed()
            slow = isinstance(failure, urllib3.exceptions.ReadTimeoutError)
            raise SolrError(0, f"Solr is unreachable at {', '.join(self.urls)}: {failure}", slow) from failure
        if self.breaker is not None:
            self.breaker.succeeded()
        if response.status >= 400:
            if response.status == 503 and len(self.urls) > 1 and self.urls[0] == node:
                # this node cannot serve now ("Cannot talk to ZooKeeper - Updates are disabled"
                # while it reconnects): the caller's next try goes to the next node
                self.urls.append(self.urls.pop(0))
            raise SolrError(response.status, _error_message(response.status, path, _json(response.data)))
        return response

    def request(
        self,
        method: str,
        path: str,
        params: Any = None,
        json: Any = None,
        data: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Sends one request and returns Solr's JSON, or raises :class:`SolrError`."""
        response = self._send(method, path, params, json, data, headers, timeout)
        body = _json(response.data)
        if not isinstance(body, dict):  # not Solr's JSON object (an HTML page of a proxy, say)
            raise SolrError(response.status, _error_message(response.status, path, body))
        return body

    def request_bytes(
        self, method: str, path: str, data: bytes, headers: dict[str, str], timeout: float | None = None
    ) -> bytes:
        """Sends one request and returns Solr's body unparsed (the bare pass-through the
        benchmarks measure the sidecar against)."""
        return self._send(method, path, data=data, headers=headers, timeout=timeout).data

    def get(self, path: str, params: Any = None, timeout: float | None = None) -> dict[str, Any]:
        return self.request("GET", path, params=params, timeout=timeout)

    def post(self, path: str, json: Any = None, params: Any = None, timeout: float | None = None) -> dict[str, Any]:
        return self.request("POST", path, params=params, json=json, timeout=timeout)


def _json(raw: bytes) -> Any:
    try:
        return jsonlib.loads(raw)
    except ValueError:
        return None


def _error_message(status: int, path: str, body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        msg = body["error"].get("msg") or body["error"].get("trace", "").split("\n")[0]
        return f"Solr error {status}: {msg}"
    return f"Solr error {status} on /{urlsplit(path).path.lstrip('/')}"
