"""Reciprocal rank fusion, by its definition."""

from __future__ import annotations

from datafari_rag.config import Settings
from datafari_rag.retrieval.hybrid import normalized_fusion, reciprocal_rank_fusion, weights_for
from datafari_rag.retrieval.params import RetrievalParams
from datafari_rag.text.language import detect_question


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


def test_weights_scale_each_list() -> None:
    fused = dict(reciprocal_rank_fusion([["a", "b"], ["b", "a"]], k=60, weights=[1.0, 0.25]))
    assert fused["a"] == 1 / 61 + 0.25 / 62 and fused["b"] == 1 / 62 + 0.25 / 61
    assert [key for key, _ in reciprocal_rank_fusion([["a"], ["b"]], k=60, weights=[0.5, 1.0])] == ["b", "a"]


def test_normalized_fusion_scales_each_list_to_0_1_then_adds_weighted() -> None:
    bm25 = [("a", 12.0), ("b", 8.0), ("c", 4.0)]  # BM25 scores: unbounded
    knn = [("c", 0.9), ("a", 0.7)]  # cosines
    fused = dict(normalized_fusion([bm25, knn], [1.0, 1.0]))
    assert fused == {"a": 1.0 + 0.0, "b": 0.5, "c": 0.0 + 1.0}
    weighted = dict(normalized_fusion([bm25, knn], [1.0, 0.5]))
    assert weighted["c"] == 0.5 and weighted["a"] == 1.0
    assert normalized_fusion([[("x", 3.0)], []], [1.0, 1.0]) == [("x", 1.0)]  # one score: full weight


def test_french_questions_have_their_own_weights() -> None:
    params = RetrievalParams.of(Settings(rrf_weight_vector=0.9, rrf_weight_vector_fr=0.25))
    french = detect_question("Combien de jours de congés payés ai-je par an dans cette entreprise ?")
    english = detect_question("How many days of paid annual leave do I get each year here?")
    assert weights_for(params, french) == (1.0, 0.25) and weights_for(params, english) == (1.0, 0.9)
