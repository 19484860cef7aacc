"""Reciprocal rank fusion, by its definition."""

from __future__ import annotations

from datafari_rag.retrieval.hybrid import reciprocal_rank_fusion


def test_scores_follow_the_formula() -> None:
    fused = dict(reciprocal_rank_fusion([["a", "b", "c"], ["c", "a"]], k=60))
    assert fused["a"] == 1 / 61 + 1 / 62
    assert fused["b"] == 1 / 62
    assert fused["c"] == 1 / 63 + 1 / 61


def test_best_first_ties_by_first_appearance() -> None:
    assert [key for key, _ in reciprocal_rank_fusion([["x", "y"], ["y", "x"]], k=1)] == ["x", "y"]
    assert [key for key, _ in reciprocal_rank_fusion([["a", "b"], ["c"]], k=60)] == ["a", "c", "b"]


def test_empty_rankings() -> None:
    assert reciprocal_rank_fusion([[], []], k=60) == []
