"""LlmService over any OpenAI-compatible chat completions API, with the ``openai`` package."""

from __future__ import annotations

import threading

import httpx
import openai

from ..config import Settings
from .service import ChatMessage, LlmError


class OpenAiLlmService:
    """Calls ``{ai.api.endpoint}/chat/completions``; at most ``llm.maxConcurrent`` calls at once."""

    def __init__(self, settings: Settings) -> None:
        self.model = settings.llm_model
        self.temperature = settings.llm_temperature
        self.max_tokens = settings.llm_max_tokens
        self.client = openai.OpenAI(
            base_url=settings.llm_url,
            api_key=settings.llm_token or "no-key",
            timeout=settings.llm_timeout,
            max_retries=settings.llm_max_retries,
            # keep a connection open for every call that may run at once
            http_client=openai.DefaultHttpxClient(
                limits=httpx.Limits(
                    max_connections=settings.llm_max_concurrent * 2,
                    max_keepalive_connections=settings.llm_max_concurrent,
                )
            ),
        )
        self._slots = threading.BoundedSemaphore(settings.llm_max_concurrent)

    def generate(self, messages: list[ChatMessage]) -> str:
        with self._slots:
            try:
                completion = self.client.chat.completions.create(
                    model=self.model,
                    messages=messages,  # type: ignore[arg-type]
                    temperature=self.temperature,
                    max_tokens=self.max_tokens,
                )
            except openai.OpenAIError as exc:
                raise LlmError(f"The LLM call failed: {exc}") from exc
        if not completion.choices:
            return ""
        return completion.choices[0].message.content or ""
