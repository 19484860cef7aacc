"""The rerank stage: the first ``rerank.topN`` passages found, ordered again by a backend that
reads query and passage together (``rerank.backend``: api, onnx or llm).

Reranking only reorders what retrieval found with the user's access: it never adds a passage.
It is bounded in count (``rerank.topN``) and in time (``rerank.timeout``); a backend that fails or
is too slow leaves the retrieval order as it was (the answer goes on, the reason is logged and
reported in the ``rag:rerank`` phase).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace

from ..config import ConfigError, Settings
from ..llm import LlmService, Usage
from .base import Snippet
from .rerankers import RerankError, Scorer

log = logging.getLogger(__name__)
_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="rerank")


@dataclass(frozen=True)
class Reranked:
    snippets: list[Snippet]
    skipped: str | None = None  # why the retrieval order was kept, if it was


@dataclass(frozen=True)
class Reranker:
    scorer: Scorer
    top_n: int
    timeout: float

    def rerank(self, query: str, snippets: list[Snippet], usage: Usage | None = None) -> Reranked:
        """The first ``top_n`` snippets by the backend's score (their ``score`` becomes it), then the
        rest in their order."""
        head, tail = snippets[: self.top_n], snippets[self.top_n :]
        if len(head) < 2:
            return Reranked(snippets)
        job = _POOL.submit(self.scorer.scores, query, [x.content for x in head], usage)
        try:
            scores = job.result(timeout=self.timeout)
        except FutureTimeout:
            job.cancel()
            return _kept(snippets, f"the reranker took more than {self.timeout:g} s")
        except RerankError as exc:
            return _kept(snippets, str(exc))
        if len(scores) != len(head):
            return _kept(snippets, f"the reranker gave {len(scores)} scores for {len(head)} passages")
        order = sorted(range(len(head)), key=lambda i: -scores[i])  # stable: ties keep retrieval order
        return Reranked([replace(head[i], score=scores[i]) for i in order] + tail)


def _kept(snippets: list[Snippet], reason: str) -> Reranked:
    log.warning("Reranking skipped, retrieval order kept: %s", reason)
    return Reranked(snippets, reason)


def build_reranker(settings: Settings, llm: LlmService | None) -> Reranker | None:
    """The reranker ``rerank.*`` describes, or None when it is off. A backend that cannot be built
    (no URL, no model folder) is a :class:`ConfigError` at start, not a failure at the first question."""
    if not settings.rerank_enabled:
        return None
    try:
        return Reranker(_scorer(settings, llm), settings.rerank_top_n, settings.rerank_timeout)
    except RerankError as exc:
        raise ConfigError(str(exc)) from exc


def _api(settings: Settings, llm: LlmService | None) -> Scorer:
    from .rerankers.api import ApiScorer

    return ApiScorer(
        settings.rerank_api_url, settings.rerank_api_key, settings.rerank_api_model, settings.rerank_timeout
    )


def _onnx(settings: Settings, llm: LlmService | None) -> Scorer:
    from .rerankers.cross_encoder import CrossEncoderScorer

    return CrossEncoderScorer(settings.rerank_onnx_path)


def _listwise(settings: Settings, llm: LlmService | None) -> Scorer:
    if llm is None:
        raise RerankError("rerank.backend=llm needs an LLM")
    from .rerankers.listwise import ListwiseScorer

    return ListwiseScorer(llm)


# each reranker of the registry (registry.RERANKERS), by its name: what builds its scorer
SCORERS: dict[str, Callable[[Settings, LlmService | None], Scorer]] = {"api": _api, "onnx": _onnx, "llm": _listwise}


def _scorer(settings: Settings, llm: LlmService | None) -> Scorer:
    return SCORERS[settings.rerank_backend](settings, llm)
