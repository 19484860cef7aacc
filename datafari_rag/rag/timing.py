"""Each step of an answer timed: into ``datafari_rag_pipeline_step_seconds`` (``/metrics``) and the
answer's own timings (the ``Server-Timing`` header of ``ai/rag``, read by ``bench/rag_overhead.py``)."""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator

from ..metrics import PIPELINE_STEP_SECONDS
from .turn import Event


def timed(name: str, events: Iterator[Event], timings: dict[str, float]) -> Generator[Event, None, None]:
    """``events``, and the time spent making them — not the time their consumer takes between two,
    which a streaming client spends reading. Closing this closes ``events`` (a client that leaves
    cancels the LLM call a step is streaming)."""
    spent = 0.0
    try:
        while True:
            began = time.perf_counter()
            try:
                event = next(events)
            except StopIteration:
                return
            finally:
                spent += time.perf_counter() - began
            yield event
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
        timings[name] = timings.get(name, 0.0) + spent
        PIPELINE_STEP_SECONDS.labels(name).observe(spent)
