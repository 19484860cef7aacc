"""Scores from the configured LLM used as a listwise reranker: it reads the numbered passages and
answers their numbers, most relevant first (RankGPT's prompt shape)."""

from __future__ import annotations

import re

from ...llm import LlmError, LlmService, Usage
from ...prompts import PromptContext
from . import RerankError

SHOWN = 600  # characters of each passage the LLM reads
_NUMBER = re.compile(r"\d+")


def ranking(answer: str, count: int) -> list[int]:
    """The passage indexes (0-based) in the order the answer names them, each once; the ones it
    does not name follow in their retrieval order."""
    named: list[int] = []
    for token in _NUMBER.findall(answer):
        index = int(token) - 1
        if 0 <= index < count and index not in named:
            named.append(index)
    return named + [i for i in range(count) if i not in named]


class ListwiseScorer:
    def __init__(self, llm: LlmService) -> None:
        self.llm = llm

    def scores(self, query: str, passages: list[str], usage: Usage | None = None) -> list[float]:
        shown = [" ".join(p.split())[:SHOWN] for p in passages]
        prompt = PromptContext(query).prompt("rerank_listwise", passages=shown)
        try:
            answer = self.llm.generate(prompt.messages(), usage)
        except LlmError as exc:
            raise RerankError(f"the LLM could not rank the passages: {exc}") from exc
        if not _NUMBER.search(answer or ""):
            raise RerankError("the LLM's ranking names no passage")
        order = ranking(answer, len(passages))
        score = {index: float(len(passages) - position) for position, index in enumerate(order)}
        return [score[i] for i in range(len(passages))]
