"""An answer's own sampling temperature (chat-core's ``temperature``), for every LLM call it makes.

Like the answer's deadline (:mod:`.deadline`), a context variable carries it from the pipeline to
the LLM clients, so that nothing between them needs another parameter; outside an answer that
sets one, each client keeps ``llm.temperature``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_TEMPERATURE: ContextVar[float | None] = ContextVar("answer_temperature", default=None)


@contextmanager
def sampled_at(temperature: float | None) -> Iterator[None]:
    """Every LLM call in the block samples at ``temperature`` (None: the client's own)."""
    token = _TEMPERATURE.set(temperature)
    try:
        yield
    finally:
        try:
            _TEMPERATURE.reset(token)
        except ValueError:  # closed from another context (a stream's generator)
            _TEMPERATURE.set(None)


def temperature(own: float) -> float:
    """The temperature of a call: its answer's, else the client's ``own``."""
    chosen = _TEMPERATURE.get()
    return own if chosen is None else chosen
