"""LlmService over any OpenAI-compatible chat completions API, with the ``openai`` package."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import openai

from ..config import Settings
from .service import ChatMessage, LlmError, Usage


def estimate_tokens(text: str) -> int:
    """A token count for LLMs that report no usage (about four characters a token)."""
    return max(1, len(text) // 4) if text else 0


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

    def _create(self, messages: list[ChatMessage], stream: bool):  # type: ignore[no-untyped-def]
        extra = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
        return self.client.chat.completions.create(
            model=self.model,
            messages=messages,  # type: ignore[arg-type]
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            **extra,
        )

    def generate(self, messages: list[ChatMessage], usage: Usage | None = None) -> str:
        with self._slots:
            try:
                completion = self._create(messages, stream=False)
            except openai.OpenAIError as exc:
                raise LlmError(f"The LLM call failed: {exc}") from exc
        text = (completion.choices[0].message.content or "") if completion.choices else ""
        if usage is not None:
            if completion.usage:
                usage.add(completion.usage.prompt_tokens, completion.usage.completion_tokens)
            else:
                usage.add(estimate_tokens(_prompt_text(messages)), estimate_tokens(text), counted=True)
        return text

    def stream(self, messages: list[ChatMessage], usage: Usage | None = None) -> Iterator[str]:
        with self._slots:
            try:
                chunks = self._create(messages, stream=True)
            except openai.OpenAIError as exc:
                raise LlmError(f"The LLM call failed: {exc}") from exc
            text, reported = [], None
            try:
                for chunk in chunks:
                    if chunk.usage:
                        reported = chunk.usage
                    for choice in chunk.choices:
                        piece = choice.delta.content if choice.delta else None
                        if piece:
                            text.append(piece)
                            yield piece
            except openai.OpenAIError as exc:
                raise LlmError(f"The LLM stream failed: {exc}") from exc
            finally:
                chunks.close()  # a client that went away cancels the upstream request
        if usage is not None:
            if reported:
                usage.add(reported.prompt_tokens, reported.completion_tokens)
            else:
                usage.add(estimate_tokens(_prompt_text(messages)), estimate_tokens("".join(text)), counted=True)


def _prompt_text(messages: list[ChatMessage]) -> str:
    return "\n".join(m["content"] for m in messages)
