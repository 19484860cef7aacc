"""An answer's deadline stays the answer's: a pipeline suspended or abandoned unclosed by its
consumer never leaves its deadline on the consumer's thread."""

from __future__ import annotations

import time
from collections.abc import Generator

from datafari_rag.llm.deadline import answer_within, ends, in_own_context

FAR = time.monotonic() + 3600


def answer(seconds: float) -> Generator[float, None, None]:
    with answer_within(seconds):
        yield ends(FAR)  # what an LLM call inside the answer would get
        yield ends(FAR)


def test_an_abandoned_answer_leaves_no_deadline_behind() -> None:
    kept = in_own_context(answer(0.0))
    assert next(kept) < FAR  # inside: the answer's deadline
    assert ends(FAR) == FAR  # outside, while it is suspended: none
    del kept
    assert ends(FAR) == FAR


def test_the_control_a_bare_generator_leaks_its_deadline_to_its_consumer() -> None:
    """Why :func:`in_own_context` exists: a generator runs in its consumer's context."""
    bare = answer(0.0)
    next(bare)
    try:
        assert ends(FAR) < FAR  # every later answer on this thread would find it expired
    finally:
        bare.close()
    assert ends(FAR) == FAR


def test_an_answer_run_to_its_end_or_closed_is_unchanged() -> None:
    assert len(list(in_own_context(answer(60.0)))) == 2
    closed = in_own_context(answer(60.0))
    next(closed)
    closed.close()
    assert ends(FAR) == FAR
