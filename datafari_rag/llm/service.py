"""The interface every LLM backend implements; the pipeline knows nothing else about LLMs."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

# How a prompt laid out message-per-document (Datafari 6.1) opens its last message, the question:
# a service that sends context and question apart (rag.template=datafari) finds it by this.
QUESTION_INTRO = "The user question is: "


class ChatMessage(TypedDict):
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class ToolCall:
    """A tool the model asks to run (OpenAI's ``tool_calls``): ``arguments`` is its JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class AssistantTurn:
    """What the model answered to a call with tools: text, tool calls, or both."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()


class LlmError(RuntimeError):
    """The LLM could not be reached or answered badly (after the configured retries)."""


@dataclass
class Usage:
    """Tokens used by the calls of one request (from the LLM's ``usage``, or counted)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    counted: bool = False  # True when some figure was estimated rather than reported
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, prompt: int, completion: int, counted: bool = False) -> None:
        with self._lock:
            self.prompt_tokens += prompt
            self.completion_tokens += completion
            self.counted = self.counted or counted

    def as_dict(self) -> dict[str, int | bool]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "estimated": self.counted,
        }


class LlmService(Protocol):
    def generate(self, messages: list[ChatMessage], usage: Usage | None = None) -> str:
        """The model's answer to ``messages`` (may be empty)."""
        ...

    def stream(self, messages: list[ChatMessage], usage: Usage | None = None) -> Iterator[str]:
        """The answer as it is generated, piece by piece. Closing the iterator cancels the call."""
        ...


class ToolCallingLlm(Protocol):
    """An LLM that can call tools (OpenAI's ``tools`` format); the agentic mode needs one."""

    def chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, usage: Usage | None = None
    ) -> AssistantTurn:
        """One turn: the model's text and the tools it asks to run."""
        ...
