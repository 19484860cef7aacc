"""Fallback models (chat-core's fallbacks): when the configured model's call fails — after its own
retries, within the answer's deadline — the same call goes to the next model of
``llm.fallbackModels``, on the same service, until one answers.

A streamed answer falls back only while nothing has been sent: once a piece reached the client,
a failure is the answer's failure (a second model would start a different answer). Every
fallback is logged and counted (``datafari_rag_llm_fallbacks``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from ..metrics import LLM_FALLBACKS
from .service import AssistantTurn, ChatMessage, LlmError, LlmService, Usage

log = logging.getLogger(__name__)
T = TypeVar("T")


class FallbackLlm:
    """``models[0]`` first, then each other in turn; ``names`` says which model each one is."""

    def __init__(self, models: Sequence[LlmService], names: Sequence[str]) -> None:
        self.models = list(models)
        self.names = list(names)

    def _first_that_answers(self, call: Callable[[Any], T]) -> T:
        for i, model in enumerate(self.models):
            try:
                return call(model)
            except LlmError as exc:
                if i + 1 == len(self.models):
                    raise
                _fell_back(self.names[i], self.names[i + 1], exc)
        raise AssertionError("unreachable: at least one model")

    def generate(self, messages: list[ChatMessage], usage: Usage | None = None) -> str:
        return self._first_that_answers(lambda m: m.generate(messages, usage))

    def stream(self, messages: list[ChatMessage], usage: Usage | None = None) -> Iterator[str]:
        for i, model in enumerate(self.models):
            pieces = model.stream(messages, usage)
            try:
                first = next(pieces, None)
            except LlmError as exc:
                if i + 1 == len(self.models):
                    raise
                _fell_back(self.names[i], self.names[i + 1], exc)
                continue
            try:
                if first is not None:
                    yield first
                    yield from pieces
            finally:
                pieces.close()  # type: ignore[attr-defined]  # a generator: closing cancels the call
            return


class ToolFallbackLlm(FallbackLlm):
    """The same, for models that call tools (the agentic mode)."""

    def chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, usage: Usage | None = None
    ) -> AssistantTurn:
        return self._first_that_answers(lambda m: m.chat(messages, tools, usage))


def _fell_back(failed: str, then: str, exc: LlmError) -> None:
    LLM_FALLBACKS.inc()
    log.warning("LLM model %s failed (%s): trying %s", failed or "(the endpoint's default)", exc, then)


def with_fallbacks(build: Callable[[str], LlmService], model: str, fallbacks: Sequence[str]) -> LlmService:
    """``build(model)``, or a :class:`FallbackLlm` over it and ``build(f)`` for each fallback."""
    primary = build(model)
    if not fallbacks:
        return primary
    chain = [primary, *(build(f) for f in fallbacks)]
    kind = ToolFallbackLlm if hasattr(primary, "chat") else FallbackLlm
    return kind(chain, [model, *fallbacks])
