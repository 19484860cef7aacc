"""The interface every LLM backend implements; the pipeline knows nothing else about LLMs."""

from __future__ import annotations

from typing import Protocol, TypedDict


class ChatMessage(TypedDict):
    role: str  # "system" | "user" | "assistant"
    content: str


class LlmError(RuntimeError):
    """The LLM could not be reached or answered badly (after the configured retries)."""


class LlmService(Protocol):
    def generate(self, messages: list[ChatMessage]) -> str:
        """The model's answer to ``messages`` (may be empty)."""
        ...
