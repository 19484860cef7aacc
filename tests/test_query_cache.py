"""The agent's query-vector cache: hits give the computed vector, only misses are computed,
indexing-sized requests pass it by, and it never holds more than its size."""

from __future__ import annotations

import numpy as np

from datafari_rag.agent.query_cache import QUERY_TEXTS, QueryVectors


class Counting:
    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def __call__(self, texts: list[str]) -> list[np.ndarray]:
        self.asked.append(list(texts))
        return [np.full(3, float(len(t))) for t in texts]


def test_only_misses_are_computed_and_hits_are_the_same_vectors() -> None:
    kept, compute = QueryVectors(10), Counting()
    first = kept.embed("m", ["a", "bb"], compute)
    again = kept.embed("m", ["bb", "ccc", "a"], compute)
    assert compute.asked == [["a", "bb"], ["ccc"]]
    assert [v.tolist() for v in again] == [first[1].tolist(), [3.0] * 3, first[0].tolist()]
    assert (kept.hits, kept.misses) == (2, 3)
    kept.embed("other-model", ["a"], compute)  # keyed by model too
    assert compute.asked[-1] == ["a"]


def test_indexing_batches_pass_by_and_the_size_is_kept() -> None:
    kept, compute = QueryVectors(2), Counting()
    batch = [f"chunk {i}" for i in range(QUERY_TEXTS + 1)]
    kept.embed("m", batch, compute)
    kept.embed("m", batch, compute)
    assert compute.asked == [batch, batch] and kept.hits == kept.misses == 0
    for text in ("x", "y", "z", "x"):
        kept.embed("m", [text], compute)
    assert compute.asked[2:] == [["x"], ["y"], ["z"], ["x"]]  # x was pushed out by z (least recently used)
    assert QueryVectors(0).embed("m", ["x"], compute)[0].tolist() == [1.0] * 3
