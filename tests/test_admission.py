"""The agent's admission of embedding batches: one at a time in arrival order, refused fast when
full or when waiting too long (never computed for a caller who gave up), queries never waiting."""

from __future__ import annotations

import threading
import time

import pytest

from datafari_rag.agent.admission import Admission, Overloaded


def run(admission: Admission, texts: int, seconds: float, log: list[str], name: str) -> None:
    """A batch of ``texts`` texts taking ``seconds`` to embed (each slice its share)."""

    def compute(piece: list[str]) -> list[float]:
        time.sleep(seconds * len(piece) / texts)
        return [0.0] * len(piece)

    try:
        with admission.turn(texts) as turn:
            log.append(f"{name} start")
            assert len(turn.embed([f"{name}{i}" for i in range(texts)], compute)) == texts
            log.append(f"{name} end")
    except Overloaded:
        log.append(f"{name} refused")


def test_batches_run_one_at_a_time_in_arrival_order() -> None:
    admission, log = Admission(max_pending=100, deadline=5), []
    threads = []
    for name in "abc":
        threads.append(threading.Thread(target=run, args=(admission, 10, 0.2, log, name)))
        threads[-1].start()
        time.sleep(0.05)
    for thread in threads:
        thread.join()
    assert log == ["a start", "a end", "b start", "b end", "c start", "c end"]
    assert admission.computed == 30 and admission.refused == 0


def test_a_batch_beyond_the_bound_is_refused_at_once() -> None:
    admission, log = Admission(max_pending=25, deadline=5), []
    first = threading.Thread(target=run, args=(admission, 20, 0.3, log, "a"))
    first.start()
    time.sleep(0.05)
    began = time.monotonic()
    with pytest.raises(Overloaded) as refused, admission.turn(10):
        pass
    assert time.monotonic() - began < 1  # not after the deadline (5 s): at once
    assert refused.value.retry_after >= 1
    first.join()
    assert admission.refused == 10 and admission.computed == 20


def test_a_batch_that_cannot_end_in_time_is_refused_or_leaves_uncomputed() -> None:
    admission, log = Admission(max_pending=100, deadline=0.2), []
    threads = [threading.Thread(target=run, args=(admission, 10, 0.5, log, "a"))]
    threads[0].start()
    time.sleep(0.05)
    threads.append(threading.Thread(target=run, args=(admission, 10, 0.1, log, "b")))  # gives up at 0.25 s
    threads[1].start()
    for thread in threads:
        thread.join()
    assert log == ["a start", "b refused", "a end"] and admission.computed == 10 and admission.refused == 10


def test_a_query_never_waits_behind_indexing() -> None:
    admission, log = Admission(max_pending=100, deadline=5), []
    batch = threading.Thread(target=run, args=(admission, 50, 0.4, log, "batch"))
    batch.start()
    time.sleep(0.05)
    run(admission, 1, 0.0, log, "query")
    batch.join()
    assert log == ["batch start", "query start", "query end", "batch end"]


def test_a_batch_that_would_end_after_the_deadline_is_refused_at_arrival() -> None:
    """Once the agent knows its pace, a batch behind too much work is refused at once instead of
    waiting for a start that would end past the deadline."""
    admission, log = Admission(max_pending=1000, deadline=1.0), []
    run(admission, 10, 0.3, log, "warm")  # 0.03 s a text
    first = threading.Thread(target=run, args=(admission, 20, 0.6, log, "a"))
    first.start()
    time.sleep(0.05)
    began = time.monotonic()
    run(admission, 20, 0.0, log, "b")  # 40 texts x 0.03 s = 1.2 s > 1 s
    assert log[-1] == "b refused" and time.monotonic() - began < 0.5  # at once, not after waiting
    first.join()
    run(admission, 10, 0.0, log, "c")  # 10 x 0.03 = 0.3 s: admitted
    assert log[-2:] == ["c start", "c end"]


def test_a_batch_the_machine_slows_down_under_is_given_up_after_a_slice() -> None:
    """The agent's pace known (0.01 s a text), a 96-text batch is admitted for a 1 s deadline;
    then the machine slows down (other work on the cores: 0.5 s a slice of 32). The batch is given
    up after the slice that showed it, not computed to its end (1.5 s) for a caller gone at 1 s."""
    admission, log = Admission(max_pending=1000, deadline=1.0), []
    run(admission, 32, 0.32, log, "warm")

    def slowed(piece: list[str]) -> list[float]:
        time.sleep(0.5)
        return [0.0] * len(piece)

    began = time.monotonic()
    with pytest.raises(Overloaded), admission.turn(96) as turn:
        turn.embed([f"t{i}" for i in range(96)], slowed)
    assert time.monotonic() - began < 1.0  # given up before the caller's deadline
    assert admission.computed == 32 + 32 and admission.refused == 64
