"""What an LLM service reads of the configuration, and nothing else: built once from the settings
(``LlmParams.of``), so that a service cannot depend on any other key."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..config import Settings


@dataclass(frozen=True)
class LlmParams:
    url: str  # the OpenAI-compatible base URL (Settings.llm_url: the local agent when none is set)
    endpoint: str  # ai.api.endpoint as written: Anthropic's, Gemini's or Datafari's own service
    token: str  # ai.api.token
    model: str  # llm.model
    temperature: float
    max_tokens: int
    timeout: float  # one attempt
    deadline: float  # the whole call, every attempt
    max_retries: int
    max_concurrent: int
    add_instructions: bool  # rag.addInstructions: Datafari's own protocol sends instructions apart

    @classmethod
    def of(cls, settings: Settings) -> LlmParams:
        return cls(
            url=settings.llm_url,
            endpoint=settings.llm_endpoint,
            token=settings.llm_token,
            model=settings.llm_model,
            temperature=settings.llm_temperature,
            max_tokens=settings.llm_max_tokens,
            timeout=settings.llm_timeout,
            deadline=settings.llm_deadline,
            max_retries=settings.llm_max_retries,
            max_concurrent=settings.llm_max_concurrent,
            add_instructions=settings.rag_add_instructions,
        )

    def with_model(self, model: str) -> LlmParams:
        """The same service for another model (``llm.fallbackModels``)."""
        return dataclasses.replace(self, model=model)
