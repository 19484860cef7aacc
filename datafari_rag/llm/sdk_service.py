"""What every LLM service over a vendor's own SDK shares (Anthropic, Google Gemini): the answer's
one deadline (:mod:`.deadline`), retries of failures that may pass while time remains
(``llm.maxRetries``), at most ``llm.maxConcurrent`` calls at once, the answer's temperature
(:mod:`.sampling`), token usage as the vendor reports it (estimated otherwise), streams closed when
the caller leaves or the deadline passes, and every failure an :class:`LlmError`.

A vendor's service says only how to send one call and read its answer (:meth:`_complete`,
:meth:`_open_stream`), and which of its SDK's errors may pass on a retry.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from ..metrics import LLM_CALLS, LLM_SECONDS, timed_call
from .deadline import ends as answer_ends
from .openai_service import count_usage, estimate_tokens
from .params import LlmParams
from .sampling import temperature as sampled
from .service import ChatMessage, LlmError, Usage

T = TypeVar("T")


@dataclass(frozen=True)
class Conversation:
    """A prompt as vendors take it: the system text apart, then turns that alternate ``user`` and
    ``assistant`` (consecutive messages of one role joined), the first one the user's."""

    system: str
    turns: tuple[tuple[str, str], ...]  # (role, text)

    @classmethod
    def of(cls, messages: list[ChatMessage]) -> Conversation:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        turns: list[tuple[str, str]] = []
        for m in messages:
            if m["role"] == "system":
                continue
            role = "assistant" if m["role"] == "assistant" else "user"
            if turns and turns[-1][0] == role:
                turns[-1] = (role, f"{turns[-1][1]}\n\n{m['content']}")
            elif turns or role == "user":
                turns.append((role, m["content"]))
            else:  # a conversation that starts with the assistant: its words as context
                turns.append(("user", f"(earlier, the assistant said) {m['content']}"))
        return cls(system, tuple(turns or [("user", "")]))

    def text(self) -> str:
        return "\n".join([self.system, *(t for _, t in self.turns)])


@dataclass(frozen=True)
class Call:
    """One call's parameters: the model, the answer's temperature, its length and time left."""

    model: str
    temperature: float
    max_tokens: int
    timeout: float  # seconds this attempt may take


class SdkLlmService(ABC):
    transient: tuple[type[BaseException], ...] = ()  # failures a retry may get past
    failures: tuple[type[BaseException], ...] = ()  # every other failure of the SDK
    vendor = "the LLM"

    def __init__(self, params: LlmParams) -> None:
        self.model = params.model
        self.temperature = params.temperature
        self.max_tokens = params.max_tokens
        self.timeout = params.timeout
        self.deadline = params.deadline
        self.max_retries = params.max_retries
        self._slots = threading.BoundedSemaphore(params.max_concurrent)

    @abstractmethod
    def _complete(self, prompt: Conversation, call: Call) -> tuple[str, tuple[int, int] | None]:
        """The answer's text and the (prompt, completion) tokens the vendor reports, if any."""

    @abstractmethod
    def _open_stream(
        self, prompt: Conversation, call: Call
    ) -> tuple[Iterator[tuple[str, tuple[int | None, int | None]]], Callable[[], None]]:
        """The answer's pieces, each with the tokens reported so far (None: not yet), and how to
        close the stream (which cancels the call)."""

    def _call(self, ends: float) -> Call:
        left = max(0.001, ends - time.monotonic())
        return Call(self.model, sampled(self.temperature), self.max_tokens, min(self.timeout, left))

    def _attempts(self, ends: float, attempt: Callable[[Call], T]) -> T:
        tries = 0
        while True:
            if time.monotonic() >= ends:
                raise LlmError(f"{self.vendor} did not answer within {self.deadline:g} s.")
            try:
                return attempt(self._call(ends))
            except self.transient as exc:
                tries += 1
                if tries > self.max_retries or time.monotonic() >= ends:
                    raise LlmError(f"The call to {self.vendor} failed: {exc}") from exc
            except self.failures as exc:
                raise LlmError(f"The call to {self.vendor} failed: {exc}") from exc

    def generate(self, messages: list[ChatMessage], usage: Usage | None = None) -> str:
        prompt = Conversation.of(messages)
        ends = answer_ends(time.monotonic() + self.deadline)
        with self._slots, timed_call(LLM_CALLS, LLM_SECONDS):
            text, reported = self._attempts(ends, lambda call: self._complete(prompt, call))
        if reported is None:
            count_usage(usage, estimate_tokens(prompt.text()), estimate_tokens(text), counted=True)
        else:
            count_usage(usage, *reported)
        return text

    def stream(self, messages: list[ChatMessage], usage: Usage | None = None) -> Iterator[str]:
        prompt = Conversation.of(messages)
        ends = answer_ends(time.monotonic() + self.deadline)
        with self._slots, timed_call(LLM_CALLS, LLM_SECONDS):
            pieces, close = self._attempts(ends, lambda call: self._open_stream(prompt, call))
            text: list[str] = []
            reported: tuple[int | None, int | None] = (None, None)
            try:
                for piece, so_far in pieces:
                    reported = so_far  # the last report stands
                    if time.monotonic() > ends:
                        raise LlmError(f"{self.vendor}'s answer did not end within {self.deadline:g} s.")
                    if piece:
                        text.append(piece)
                        yield piece
            except self.transient + self.failures as exc:
                raise LlmError(f"The stream from {self.vendor} failed: {exc}") from exc
            finally:
                close()  # a caller that went away cancels the upstream request
        prompt_tokens, completion_tokens = reported
        if prompt_tokens is None or completion_tokens is None:
            count_usage(usage, estimate_tokens(prompt.text()), estimate_tokens("".join(text)), counted=True)
        else:
            count_usage(usage, prompt_tokens, completion_tokens)
