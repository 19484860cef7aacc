"""Back-pressure for bulk embedding: batches are embedded one at a time, in arrival order, and a
batch the agent cannot finish in time is refused fast instead of being computed for nobody.

Embedding runs on every core; batches computed side by side share them, so under a burst every
batch slows down together until all of them outlast their callers' timeouts — computed, then
thrown away, while the callers retry and the agent falls further behind. Here a batch waits its
turn (FIFO) and runs alone at full speed. From the measured seconds per text, a batch that could
not be finished within ``deadline`` seconds of its arrival (the texts ahead of it and its own) is
refused at once, one whose wait runs past that point leaves the queue uncomputed, and more than
``max_pending`` texts never wait — all with 503 and ``Retry-After``, which OpenAI clients and
Solr's embedding model retry. Queries (``interactive`` texts or fewer) never wait behind
indexing: they run at once.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager


class Overloaded(RuntimeError):
    """The batch was not embedded: the agent is full, or the batch could not finish in time."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Admission:
    def __init__(self, max_pending: int, deadline: float, interactive: int = 4) -> None:
        self.max_pending, self.deadline, self.interactive = max_pending, deadline, interactive
        self._turns: deque[object] = deque()
        self._pending = 0  # texts of the batches queued or running
        self._per_text: float | None = None  # seconds per text, a moving average of recent batches
        self._changed = threading.Condition()
        self.computed = 0  # texts embedded
        self.refused = 0  # texts refused or given up, never computed

    def _refuse(self, texts: int, message: str) -> Overloaded:
        self.refused += texts
        return Overloaded(message, max(1, round(self.deadline / 4)))

    def _cost(self, texts: int) -> float:
        return texts * (self._per_text or 0.0)

    @contextmanager
    def turn(self, texts: int) -> Iterator[None]:
        """Holds the batch's turn while it is embedded, or raises :class:`Overloaded`."""
        if texts <= self.interactive:
            yield
            self.computed += texts
            return
        ticket = object()
        with self._changed:
            if self._pending + texts > self.max_pending:
                raise self._refuse(texts, f"{self._pending} texts are waiting to be embedded; try again shortly.")
            if self._cost(self._pending + texts) > self.deadline:
                raise self._refuse(
                    texts, f"The batch could not be embedded within {self.deadline:g} s; try again shortly."
                )
            self._pending += texts
            self._turns.append(ticket)
            # it must start early enough to end within the deadline
            latest = max(0.0, self.deadline - self._cost(texts))
            if not self._changed.wait_for(lambda: self._turns[0] is ticket, timeout=latest):
                self._leave(ticket, texts)
                raise self._refuse(texts, f"The batch could not start in time to end within {self.deadline:g} s.")
        began = time.monotonic()
        try:
            yield
            self.computed += texts
            spent = (time.monotonic() - began) / texts
            self._per_text = spent if self._per_text is None else 0.7 * self._per_text + 0.3 * spent
        finally:
            with self._changed:
                self._leave(ticket, texts)

    def _leave(self, ticket: object, texts: int) -> None:
        self._turns.remove(ticket)
        self._pending -= texts
        self._changed.notify_all()
