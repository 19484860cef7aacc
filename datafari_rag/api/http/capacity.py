"""Separate capacity for answers: a slow LLM can hold only part of a process's threads.

Each gunicorn process serves ``server.threads`` requests at once. Answers (``ai/rag``, ``ai/stream``,
``ai/summarize``, ``search/select?action=rag``) wait on the LLM, up to ``llm.deadline``; if they
could take every thread, a hung LLM would make plain searches queue behind them. So at most
``server.threads - server.reservedThreads`` answers run at once per process; one more is refused
at once (``ragTechnicalError``, "too many answers in progress"), and the reserved threads are always
free for searches, health checks and updates.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from flask import current_app

from ...errors import DatafariError
from ...metrics import ANSWER_SLOTS


class AnswerSlots:
    def __init__(self, threads: int, reserved: int) -> None:
        self.size = max(1, threads - reserved)
        self._free = threading.BoundedSemaphore(self.size)

    def take(self, label: str = "ragTechnicalError") -> None:
        if not self._free.acquire(blocking=False):
            raise DatafariError(label, f"Too many answers are in progress ({self.size}); try again in a moment.")
        ANSWER_SLOTS.inc()

    def give_back(self) -> None:
        self._free.release()
        ANSWER_SLOTS.dec()


class Hold:
    """One slot held by a stream: given back once, whichever comes first — the stream's end (its
    generator finishes or is closed) or the response being closed (a stream never read)."""

    def __init__(self, pool: AnswerSlots) -> None:
        pool.take()
        self._pool, self._held = pool, True
        self._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            if self._held:
                self._held = False
                self._pool.give_back()


def slots() -> AnswerSlots:
    return current_app.extensions["answer_slots"]


@contextmanager
def answer_slot(label: str = "ragTechnicalError") -> Iterator[None]:
    """Holds one answer slot for the block, or refuses at once when none is free."""
    pool = slots()
    pool.take(label)
    try:
        yield
    finally:
        pool.give_back()
