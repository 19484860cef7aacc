"""A circuit breaker for Solr: when Solr stops answering, requests fail in milliseconds.

After ``failures`` consecutive requests that could not reach Solr or timed out, the circuit opens
for ``cooldown`` seconds: every request fails at once, without waiting for a timeout, so a Solr
restart does not hold every client (and every server thread) for the whole Solr timeout. Then one
request is let through to try; its success closes the circuit, its failure opens it again.
"""

from __future__ import annotations

import threading
import time


class CircuitBreaker:
    def __init__(self, failures: int = 3, cooldown: float = 5.0) -> None:
        self.threshold = failures
        self.cooldown = cooldown
        self._failures = 0
        self._open_until = 0.0
        self._trial = False
        self._lock = threading.Lock()
        self.last_success = float("-inf")  # monotonic time of the last request Solr answered

    def allow(self) -> bool:
        """May a request go to Solr now? (While open, no; after the cooldown, one trial at a time.)"""
        with self._lock:
            if self._failures < self.threshold:
                return True
            if time.monotonic() < self._open_until or self._trial:
                return False
            self._trial = True
            return True

    def succeeded(self) -> None:
        with self._lock:
            self._failures, self._trial = 0, False
            self.last_success = time.monotonic()

    def failed(self) -> None:
        with self._lock:
            self._failures += 1
            self._trial = False
            if self._failures >= self.threshold:
                self._open_until = time.monotonic() + self.cooldown

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._failures >= self.threshold and time.monotonic() < self._open_until


class Watcher:
    """A breaker's read-only view, for health checks: a check fails at once while the circuit is
    open, but its own short budget running out is not Solr failing, and must never open the
    circuit for every search (nor take the one trial request after a cooldown)."""

    def __init__(self, breaker: CircuitBreaker | Watcher) -> None:
        self.breaker = breaker

    @property
    def is_open(self) -> bool:
        return self.breaker.is_open

    @property
    def last_success(self) -> float:
        return self.breaker.last_success

    def allow(self) -> bool:
        return not self.breaker.is_open

    def failed(self) -> None:
        """Not counted."""

    def succeeded(self) -> None:
        """Not counted."""
