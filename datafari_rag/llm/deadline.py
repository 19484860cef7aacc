"""One deadline for a whole answer: ``llm.deadline`` counted from when the answer began, not from
each LLM call. An answer may call the LLM several times (rewriting, the guard, reasoning, the
answer itself), after retrieval has taken its share; each call's own deadline is cut to what
the answer has left, so a hung LLM ends the answer at ``llm.deadline`` (it used to be that plus
the time spent before the call, or several times it).

The pipeline opens :func:`answer_within` around an answer; the LLM clients read :func:`ends`.
A context variable carries it, so that nothing between the two needs another parameter. The
pipeline is a generator, which runs in its consumer's context: :func:`in_own_context` drives it
in a context of its own, so that an answer suspended or abandoned unclosed by its consumer never
leaves its deadline on the consumer's thread (every later answer there would find it expired).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, copy_context
from typing import Any, TypeVar

T = TypeVar("T")

_ENDS: ContextVar[float | None] = ContextVar("answer_ends", default=None)


@contextmanager
def answer_within(seconds: float) -> Iterator[None]:
    """Every LLM call in the block ends by ``seconds`` from now (an enclosing, earlier deadline stays)."""
    ends = time.monotonic() + seconds
    outer = _ENDS.get()
    token = _ENDS.set(ends if outer is None else min(outer, ends))
    try:
        yield
    finally:
        try:
            _ENDS.reset(token)
        except ValueError:  # closed from another context (a stream's generator): just clear it
            _ENDS.set(outer)


def in_own_context(items: Generator[T, None, None]) -> Generator[T, None, None]:
    """``items``, each step run in a copy of the current context: what it sets stays its own."""
    own = copy_context()
    try:
        while True:
            try:
                item = own.run(next, items)
            except StopIteration:
                return
            yield item
    finally:
        own.run(items.close)


def ends(own: float) -> float:
    """A call's deadline (``own``, a ``time.monotonic()`` value) cut to its answer's."""
    answer = _ENDS.get()
    return own if answer is None else min(own, answer)


def carried(call: Callable[..., T]) -> Callable[..., T]:
    """``call`` for another thread (a pool's), under the answer's deadline as it is here."""
    answer = _ENDS.get()

    def run(*args: Any) -> T:
        token = _ENDS.set(answer)
        try:
            return call(*args)
        finally:
            _ENDS.reset(token)

    return run


@contextmanager
def closed_at(ends: float, close: Callable[[], object]) -> Iterator[Callable[[], bool]]:
    """Calls ``close`` (an LLM response's) at ``ends`` if the block is still running: a read waiting
    on a peer that went silent is interrupted at the deadline, not at the read's own timeout (a
    stream whose pieces came every few seconds ran that long past it). Yields whether it fired."""
    fired = threading.Event()

    def fire() -> None:
        fired.set()
        close()

    timer = threading.Timer(max(0.0, ends - time.monotonic()), fire)
    timer.daemon = True
    timer.start()
    try:
        yield fired.is_set
    finally:
        timer.cancel()
