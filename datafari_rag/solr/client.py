"""One HTTP client for Solr: timeouts, Basic auth and Solr's error messages in one place."""

from __future__ import annotations

from typing import Any

import requests
from requests.adapters import HTTPAdapter

POOL_SIZE = 128  # connections kept open to Solr: every concurrent request of a busy process


class SolrError(RuntimeError):
    """Solr answered with an error, or could not be reached; ``status`` is 0 when unreachable."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class SolrClient:
    """A thin JSON client over Solr's HTTP API, shared by every part of the sidecar."""

    def __init__(self, base_url: str, timeout: float = 30.0, auth: tuple[str, str] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()
        # Solr is reached directly: no proxy or .netrc look-up from the environment on every call
        self.session.trust_env = False
        adapter = HTTPAdapter(pool_connections=4, pool_maxsize=POOL_SIZE)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        if auth:
            self.session.auth = auth

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
        url = f"{self.base_url}/{path.lstrip('/')}"
        query = list(params.items()) if isinstance(params, dict) else list(params or [])
        query.append(("wt", "json"))
        try:
            response = self.session.request(
                method,
                url,
                params=query,
                json=json,
                data=data,
                headers=headers,
                timeout=timeout or self.timeout,
            )
        except requests.RequestException as exc:
            raise SolrError(0, f"Solr is unreachable at {self.base_url}: {exc}") from exc
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code >= 400 or body is None:
            raise SolrError(response.status_code, _error_message(response, body))
        return body

    def get(self, path: str, params: Any = None, timeout: float | None = None) -> dict[str, Any]:
        return self.request("GET", path, params=params, timeout=timeout)

    def post(self, path: str, json: Any = None, params: Any = None, timeout: float | None = None) -> dict[str, Any]:
        return self.request("POST", path, params=params, json=json, timeout=timeout)


def _error_message(response: requests.Response, body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        msg = body["error"].get("msg") or body["error"].get("trace", "").split("\n")[0]
        return f"Solr error {response.status_code}: {msg}"
    return f"Solr error {response.status_code} on {response.request.path_url.split('?')[0]}"
