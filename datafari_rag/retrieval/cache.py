"""A semantic cache of retrieval results (chat-core's): a query whose embedding is close to a
recent one (cosine ≥ ``cache.threshold``) reuses that query's results.

Only within one *scope*: the user's exact access (the hash of their token set and groups), every
retrieval setting and the request's source filters — a user never gets results retrieved for an
access that differs from theirs in any way. Entries live ``cache.ttl`` seconds, at most
``cache.maxEntries`` are kept (the oldest go first), and a change of either collection (its
document count or highest ``_version_``, checked at most every ``cache.versionCheck`` seconds)
empties the cache. A cache that cannot embed the query is skipped, never an error.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

from ..config.rag import CacheSettings
from ..security import UserAccess
from .base import RetrievalContext, Snippet

log = logging.getLogger(__name__)


def access_key(access: UserAccess) -> str:
    """The hash of exactly what decides what a user may read."""
    parts = ["unrestricted" if access.unrestricted else "", *sorted(access.tokens), "\x1e", *sorted(access.groups)]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def scope(ctx: RetrievalContext) -> Hashable:
    """Which results may be shared: same access, same retrieval settings, same source filters."""
    restrict = tuple(sorted(ctx.restrict.values.items())), tuple(sorted(ctx.restrict.ranges.items()))
    # what decides the results: the collections, the retrieval parameters, whether kNN embeds
    # other texts (HyDE), the user, the source filters
    where = ctx.main.name, ctx.vectors.name, bool(ctx.dense)
    return access_key(ctx.access), where, ctx.params, restrict


@dataclass
class _Entry:
    scope: Hashable
    vector: np.ndarray
    found: list[Snippet]
    created: float


class SemanticCache:
    def __init__(
        self,
        settings: CacheSettings,
        embed: Callable[[str], list[float]],
        version: Callable[[], Hashable],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.threshold = settings.cache_threshold
        self.ttl = settings.cache_ttl
        self.max_entries = settings.cache_max_entries
        self.version_every = settings.cache_version_check
        self.embed = embed
        self.version = version
        self.clock = clock
        self._entries: OrderedDict[int, _Entry] = OrderedDict()
        self._next = 0
        self._seen: Hashable = None
        self._checked = float("-inf")
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: Hashable, query: str, retrieve: Callable[[], list[Snippet]]) -> tuple[list[Snippet], bool]:
        """The results for ``query`` in scope ``key``: cached, or retrieved (and kept). (results, hit)."""
        try:
            vector = self._unit(self.embed(query))
            self._check_version()
        except Exception as exc:  # the cache is an optimisation: without it, retrieval still works
            log.warning("semantic cache skipped: %r", exc)
            return retrieve(), False
        now = self.clock()
        with self._lock:
            for ident, entry in list(self._entries.items()):
                if now - entry.created > self.ttl:
                    del self._entries[ident]
                elif entry.scope == key and float(entry.vector @ vector) >= self.threshold:
                    self.hits += 1
                    return list(entry.found), True
            self.misses += 1
        found = retrieve()
        with self._lock:
            self._entries[self._next] = _Entry(key, vector, list(found), now)
            self._next += 1
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return found, False

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _check_version(self) -> None:
        now = self.clock()
        with self._lock:
            if now - self._checked < self.version_every:
                return
            self._checked = now
        current = self.version()
        with self._lock:
            if current != self._seen:
                self._entries.clear()
                self._seen = current

    @staticmethod
    def _unit(vector: list[float]) -> np.ndarray:
        array = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(array))
        return array / norm if norm else array
