"""The rerank stage and its backends, without Solr: order, bounds, failures kept harmless."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from flask import Flask, jsonify, request

from datafari_rag.config import ConfigError, Settings, convert
from datafari_rag.llm import Usage
from datafari_rag.retrieval.base import Snippet
from datafari_rag.retrieval.rerank import Reranker, build_reranker
from datafari_rag.retrieval.rerankers import RerankError
from datafari_rag.retrieval.rerankers.api import ApiScorer
from datafari_rag.retrieval.rerankers.cross_encoder import CrossEncoderScorer
from datafari_rag.retrieval.rerankers.listwise import ranking
from datafari_rag.testing.overlap_cross_encoder import write_overlap_cross_encoder
from datafari_rag.testing.servers import serve


def snippets(*texts: str) -> list[Snippet]:
    return [Snippet(f"doc{i}", f"T{i}", f"u{i}", t, score=10.0 - i) for i, t in enumerate(texts)]


class Fixed:
    def __init__(self, scores: list[float], delay: float = 0.0, error: str = "") -> None:
        self.values, self.delay, self.error, self.calls = scores, delay, error, 0

    def scores(self, query: str, passages: list[str], usage: Usage | None = None) -> list[float]:
        self.calls += 1
        time.sleep(self.delay)
        if self.error:
            raise RerankError(self.error)
        return self.values[: len(passages)]


def test_the_head_is_reordered_by_score_and_the_tail_kept() -> None:
    found = snippets("a", "b", "c", "d", "e")
    out = Reranker(Fixed([0.1, 0.9, 0.5]), top_n=3, timeout=1).rerank("q", found)
    assert [x.content for x in out.snippets] == ["b", "c", "a", "d", "e"]
    assert [x.score for x in out.snippets[:3]] == [0.9, 0.5, 0.1] and out.skipped is None


def test_equal_scores_keep_the_retrieval_order() -> None:
    out = Reranker(Fixed([1.0, 2.0, 1.0, 1.0]), top_n=4, timeout=1).rerank("q", snippets("a", "b", "c", "d"))
    assert [x.content for x in out.snippets] == ["b", "a", "c", "d"]


@pytest.mark.parametrize(
    ("scorer", "reason"),
    [
        (Fixed([1.0, 2.0], delay=0.5), "took more than 0.2 s"),
        (Fixed([1.0, 2.0], error="endpoint down"), "endpoint down"),
        (Fixed([1.0]), "1 scores for 2 passages"),
    ],
)
def test_a_slow_failing_or_wrong_backend_leaves_the_order(scorer: Fixed, reason: str) -> None:
    found = snippets("a", "b")
    out = Reranker(scorer, top_n=5, timeout=0.2).rerank("q", found)
    assert out.snippets == found and reason in (out.skipped or "")


def test_one_passage_is_not_sent_to_the_backend() -> None:
    scorer = Fixed([1.0])
    assert Reranker(scorer, 5, 1).rerank("q", snippets("a")).snippets == snippets("a") and scorer.calls == 0


def test_a_listwise_answer_becomes_an_order() -> None:
    assert ranking("[3] > [1] > [2]", 4) == [2, 0, 1, 3]  # an unnamed passage follows, in its order
    assert ranking("3, 3, 9, 1", 3) == [2, 0, 1]  # repeats and numbers out of range are ignored


def test_the_cross_encoder_scores_pairs_from_its_folder(tmp_path: Path) -> None:
    scorer = CrossEncoderScorer(str(write_overlap_cross_encoder(tmp_path / "model")))
    texts = ["the pump needs maintenance on a schedule", "a cat sat on the mat", "pump"]
    assert scorer.scores("pump maintenance schedule", texts) == [3.0, 0.0, 1.0]
    many = ["pump"] * 40  # more than one batch, padded to the longest
    assert scorer.scores("pump", [*many, "no match here " * 300]) == [1.0] * 40 + [0.0]


def test_a_folder_without_model_or_tokenizer_is_a_config_error(tmp_path: Path) -> None:
    settings = Settings(rerank_enabled=True, rerank_backend="onnx", rerank_onnx_path=str(tmp_path))
    with pytest.raises(ConfigError, match=r"rerank\.onnx\.path"):
        build_reranker(settings, None)
    with pytest.raises(ConfigError, match=r"rerank\.api\.url"):
        build_reranker(settings.replace(rerank_backend="api"), None)
    assert build_reranker(settings.replace(rerank_enabled=False), None) is None


def test_rerank_bounds_are_validated() -> None:
    with pytest.raises(ConfigError, match=r"rerank\.topN: '500' must be at most 100"):
        convert("rerank.topN", "500")
    with pytest.raises(ConfigError, match=r"rerank\.backend: 'bert' is not one of api, onnx, llm"):
        convert("rerank.backend", "bert")


def test_the_api_scorer_speaks_the_cohere_and_jina_protocol() -> None:
    seen: list[tuple[dict, str | None]] = []
    app = Flask(__name__)

    @app.post("/v1/rerank")
    def rerank():  # type: ignore[no-untyped-def]
        body = request.get_json()
        seen.append((body, request.headers.get("Authorization")))
        if body["query"] == "broken":
            return jsonify({"unexpected": True})
        # Cohere answers the top_n best first; one passage left out must score lowest
        return jsonify({"results": [{"index": 1, "relevance_score": 0.8}, {"index": 0, "relevance_score": 0.3}]})

    with serve(app) as url:
        scorer = ApiScorer(f"{url}/v1/rerank", key="k1", model="rerank-v3.5", timeout=5)
        assert scorer.scores("q", ["a", "b", "c"]) == [0.3, 0.8, -0.7]
        body, auth = seen[0]
        assert body == {"query": "q", "documents": ["a", "b", "c"], "top_n": 3, "model": "rerank-v3.5"}
        assert auth == "Bearer k1"
        with pytest.raises(RerankError, match="not a rerank result"):
            scorer.scores("broken", ["a"])
    with pytest.raises(RerankError, match="failed"):
        scorer.scores("q", ["a"])  # the server is gone
