"""Back-pressure for bulk embedding: batches are embedded one at a time, in arrival order, and a
batch the agent cannot finish in time is refused fast instead of being computed for nobody.

Embedding runs on every core; batches computed side by side share them, so under a burst every
batch slows down together until all of them outlast their callers' timeouts — computed, then
thrown away, while the callers retry and the agent falls further behind. Here a batch waits its
turn (FIFO) and runs alone at full speed. From the measured seconds per text, a batch that could
not be finished within ``deadline`` seconds of its arrival (the texts ahead of it and its own) is
refused at once, one whose wait runs past that point leaves the queue uncomputed, and more than
``max_pending`` texts never wait — all with 503 and ``Retry-After``, which OpenAI clients and
Solr's embedding model retry. A batch admitted close to its deadline is computed in slices
(:data:`SLICE` texts), each started only if it can end by the batch's deadline: when the machine
slows down under it (other work on the cores), the batch is given up after a slice, not computed
to its end for a caller that has already left. Queries (``interactive`` texts or fewer) never
wait behind indexing: they run at once.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

SLICE = 32  # texts computed at once within a batch: the deadline is looked at between slices


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
    def turn(self, texts: int) -> Iterator[Turn]:
        """Holds the batch's turn while it is embedded (through the :class:`Turn` it yields), or
        raises :class:`Overloaded`."""
        if texts <= self.interactive:
            yield Turn(self, float("inf"))
            return
        ends = time.monotonic() + self.deadline
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
        try:
            yield Turn(self, ends)
        finally:
            with self._changed:
                self._leave(ticket, texts)

    def _paced(self, texts: int, spent: float) -> None:
        """What ``texts`` texts took: the moving average every estimate uses."""
        self.computed += texts
        if texts:
            pace = spent / texts
            self._per_text = pace if self._per_text is None else 0.7 * self._per_text + 0.3 * pace

    def _leave(self, ticket: object, texts: int) -> None:
        self._turns.remove(ticket)
        self._pending -= texts
        self._changed.notify_all()


class Turn:
    """A batch's turn: its texts computed slice by slice while they can end by its deadline."""

    def __init__(self, admission: Admission, ends: float) -> None:
        self.admission, self.ends = admission, ends

    def embed(self, texts: list[str], compute: Callable[[list[str]], Sequence[Any]]) -> list[Any]:
        """``compute`` of ``texts``, in slices; :class:`Overloaded` when the next slice could not
        end in time (what was computed is then lost, a slice at most)."""
        done: list[Any] = []
        pace = 0.0  # seconds a text of this batch's last slice took: a slowdown is seen at once
        start = 0
        while start < len(texts):
            # the rest in one call while twice its cost fits (a call of 32 texts costs 7 % more a
            # text than one of 256 here), else a slice, looked at before the next
            rest = texts[start:]
            roomy = time.monotonic() + 2 * max(self.admission._cost(len(rest)), pace * len(rest)) <= self.ends
            piece = rest if roomy else texts[start : start + SLICE]
            if time.monotonic() + max(self.admission._cost(len(piece)), pace * len(piece)) > self.ends:
                left = len(texts) - start
                raise self.admission._refuse(
                    left, f"The batch could not be embedded within {self.admission.deadline:g} s; try again shortly."
                )
            began = time.monotonic()
            done.extend(compute(piece))
            spent = time.monotonic() - began
            self.admission._paced(len(piece), spent)
            pace = spent / len(piece)
            start += len(piece)
        return done
