"""An indexing job's progress POSTed to the caller's URL: only to ``index.callback.allowedHosts``,
each post tried at most ``1 + index.callback.retries`` times (backing off), never holding the job
longer than that."""

from __future__ import annotations

import logging
import time
from typing import Any
from urllib.parse import urlsplit

import urllib3

from ..config import Settings
from ..config.indexing import IndexingSettings

log = logging.getLogger(__name__)
_POOL = urllib3.PoolManager(retries=False)


class CallbackRefused(ValueError):
    """A callback URL the configuration does not allow."""


def allowed_hosts(settings: Settings) -> set[str]:
    return {h.strip().lower() for h in settings.callback_allowed_hosts.split(",") if h.strip()}


def check_callback(url: Any, settings: Settings) -> str:
    """The URL if it may be called back: http(s), its host (or host:port) among the allowed ones."""
    if not isinstance(url, str) or len(url) > 2048:
        raise CallbackRefused("'callback' is an http(s) URL of at most 2048 characters.")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CallbackRefused("'callback' is an http(s) URL.")
    allowed = allowed_hosts(settings)
    host = parts.hostname.lower()
    if host not in allowed and f"{host}:{parts.port}" not in allowed:
        raise CallbackRefused(f"'callback': {host} is not among index.callback.allowedHosts.")
    return url


def post_progress(url: str, payload: dict[str, Any], settings: IndexingSettings, sleep: Any = time.sleep) -> bool:
    """POSTs the payload; True once a 2xx comes back, False when every try failed."""
    tries = 1 + settings.callback_retries
    for attempt in range(tries):
        try:
            response = _POOL.request("POST", url, json=payload, timeout=settings.callback_timeout, redirect=False)
            if 200 <= response.status < 300:
                return True
            reason = f"HTTP {response.status}"
        except urllib3.exceptions.HTTPError as exc:
            reason = type(exc).__name__
        if attempt + 1 < tries:
            sleep(min(0.25 * 2**attempt, 4.0))
    log.warning("job callback to %s failed %d time(s) (%s): given up", urlsplit(url).hostname, tries, reason)
    return False
