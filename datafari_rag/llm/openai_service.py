"""LlmService over any OpenAI-compatible chat completions API, with the ``openai`` package.

Every call has a total deadline (``llm.deadline``): attempts are retried (``llm.maxRetries``) only
while time remains, each attempt's timeouts are cut to the time left, and a streamed answer is
closed when the deadline passes, however slowly its tokens trickle in.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import httpx2
import openai
from openai._constants import RAW_RESPONSE_HEADER

from ..metrics import LLM_CALLS, LLM_SECONDS, LLM_TOKENS, timed_call
from .deadline import closed_at
from .deadline import ends as answer_ends
from .params import LlmParams
from .sampling import temperature as sampled
from .service import AssistantTurn, ChatMessage, LlmError, ToolCall, Usage

T = TypeVar("T")


def _interrupt(response: httpx2.Response) -> Callable[[], None]:
    """What ends, from another thread, a read under way on ``response``: its socket shut down
    (closing a socket does not wake a thread blocked reading it); the reader then closes it."""

    def cut() -> None:
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    return cut


def estimate_tokens(text: str) -> int:
    """A token count for LLMs that report no usage (about four characters a token)."""
    return max(1, len(text) // 4) if text else 0


class OpenAiLlmService:
    """Calls ``{ai.api.endpoint}/chat/completions``; at most ``llm.maxConcurrent`` calls at once."""

    def __init__(self, params: LlmParams) -> None:
        self.model = params.model
        self.temperature = params.temperature
        self.max_tokens = params.max_tokens
        self.timeout = params.timeout
        self.deadline = params.deadline
        self.max_retries = params.max_retries
        self.client = openai.OpenAI(
            base_url=params.url,
            api_key=params.token or "no-key",
            timeout=params.timeout,
            max_retries=0,  # retried here, within the deadline
            # keep a connection open for every call that may run at once
            http_client=openai.DefaultHttpxClient(
                limits=httpx2.Limits(
                    max_connections=params.max_concurrent * 2,
                    max_keepalive_connections=params.max_concurrent,
                )
            ),
        )
        self._slots = threading.BoundedSemaphore(params.max_concurrent)

    def _timeout(self, ends: float) -> httpx2.Timeout:
        """This attempt's timeouts: never past the call's deadline."""
        left = max(0.001, ends - time.monotonic())
        return httpx2.Timeout(min(self.timeout, left), connect=min(5.0, left))

    def _attempts(self, ends: float, call: Callable[[httpx2.Timeout], T]) -> T:
        """``call(timeout)`` until it succeeds, retrying failures that may pass while time remains."""
        attempt = 0
        while True:
            if time.monotonic() >= ends:
                raise LlmError(f"The LLM did not answer within {self.deadline:g} s.")
            try:
                return call(self._timeout(ends))
            except (
                openai.APIConnectionError,
                openai.RateLimitError,
                openai.InternalServerError,
                httpx2.TransportError,  # reading the body: the connection broke or timed out
            ) as exc:
                attempt += 1
                if attempt > self.max_retries or time.monotonic() >= ends:
                    raise LlmError(f"The LLM call failed: {exc}") from exc
            except (openai.OpenAIError, httpx2.HTTPError) as exc:
                raise LlmError(f"The LLM call failed: {exc!r}") from exc

    def _create_stream(self, messages: list[ChatMessage], timeout: httpx2.Timeout) -> Any:
        return self.client.chat.completions.create(  # type: ignore[call-overload]  # messages: the API's dicts
            model=self.model or openai.omit,  # a blank llm.model is left out (the endpoint's default)
            messages=messages,
            temperature=sampled(self.temperature),
            max_tokens=self.max_tokens,
            stream=True,
            stream_options={"include_usage": True},
            timeout=timeout,
        )

    def _complete(
        self,
        messages: list[ChatMessage] | list[dict[str, Any]],
        timeout: httpx2.Timeout,
        ends: float,
        tools: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """One non-streamed completion as plain JSON, through the client's own ``post`` (its
        timeouts and errors) but without typed request and response models: those cost a
        millisecond of CPU a call (measured), which 64 concurrent requests on 2 cores feel. The body
        is read piece by piece so that one that trickles in is cut at the deadline too."""
        body = {
            **({"model": self.model} if self.model else {}),  # a blank llm.model is left out
            "messages": messages,
            "temperature": sampled(self.temperature),
            "max_tokens": self.max_tokens,
            **({"tools": tools, "tool_choice": "auto"} if tools else {}),
        }
        response = self.client.post(
            "/chat/completions",
            cast_to=httpx2.Response,
            body=body,
            options={"timeout": timeout, "headers": {RAW_RESPONSE_HEADER: "stream"}},  # body not read yet
        )
        try:
            raw = bytearray()
            with closed_at(ends, _interrupt(response)) as cut:
                try:
                    for piece in response.iter_bytes():
                        raw += piece
                        if time.monotonic() > ends:
                            raise LlmError(f"The LLM's answer did not end within {self.deadline:g} s.")
                except Exception as exc:
                    if cut() and not isinstance(exc, LlmError):  # closed at the deadline under the read
                        raise LlmError(f"The LLM's answer did not end within {self.deadline:g} s.") from exc
                    raise
                if cut():
                    raise LlmError(f"The LLM's answer did not end within {self.deadline:g} s.")
        finally:
            response.close()
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise LlmError(f"The LLM answered with something that is not JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise LlmError("The LLM answered with JSON that is not a chat completion.")
        failed = error_of(data)
        if failed is not None:
            raise failed
        if not isinstance(data.get("choices"), list) or not data["choices"]:
            raise LlmError("The LLM answered with JSON that is not a chat completion (no choices).")
        return data

    def generate(self, messages: list[ChatMessage], usage: Usage | None = None) -> str:
        return self.chat(messages, None, usage).content  # type: ignore[arg-type]

    def chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, usage: Usage | None = None
    ) -> AssistantTurn:
        ends = answer_ends(time.monotonic() + self.deadline)
        with self._slots, timed_call(LLM_CALLS, LLM_SECONDS):
            completion = self._attempts(ends, lambda timeout: self._complete(messages, timeout, ends, tools))
        choice = (completion.get("choices") or [{}])[0]
        message = (choice.get("message") if isinstance(choice, dict) else None) or {}
        text = message.get("content") or ""
        calls = tuple(
            ToolCall(
                str(c.get("id") or f"call_{i}"), str(c["function"]["name"]), c["function"].get("arguments") or "{}"
            )
            for i, c in enumerate(message.get("tool_calls") or [])
            if isinstance(c, dict) and isinstance(c.get("function"), dict) and c["function"].get("name")
        )
        reported = completion.get("usage") or {}
        if reported.get("prompt_tokens") is not None:
            count_usage(usage, reported["prompt_tokens"], reported.get("completion_tokens") or 0)
        else:
            count_usage(usage, estimate_tokens(_prompt_text(messages)), estimate_tokens(text), counted=True)
        return AssistantTurn(text, calls)

    def stream(self, messages: list[ChatMessage], usage: Usage | None = None) -> Iterator[str]:
        ends = answer_ends(time.monotonic() + self.deadline)
        with self._slots, timed_call(LLM_CALLS, LLM_SECONDS):
            chunks = self._attempts(ends, lambda timeout: self._create_stream(messages, timeout))
            refused_with_200(chunks)
            text, reported = [], None
            late = f"The LLM's answer did not end within {self.deadline:g} s."
            try:
                with closed_at(ends, _interrupt(chunks.response)) as cut:
                    try:
                        for chunk in chunks:
                            if time.monotonic() > ends or cut():
                                raise LlmError(late)
                            if chunk.usage:
                                reported = chunk.usage
                            for choice in chunk.choices:
                                piece = choice.delta.content if choice.delta else None
                                if piece:
                                    text.append(piece)
                                    yield piece
                    except LlmError:
                        raise
                    except Exception as exc:
                        if cut():  # closed at the deadline under the read, whatever the read raised
                            raise LlmError(late) from exc
                        if isinstance(exc, openai.OpenAIError | httpx2.HTTPError):
                            raise LlmError(f"The LLM stream failed: {exc!r}") from exc
                        raise
                    if cut():  # the close ended the iteration quietly
                        raise LlmError(late)
            finally:
                chunks.close()  # a client that went away cancels the upstream request
        if reported:
            count_usage(usage, reported.prompt_tokens, reported.completion_tokens)
        else:
            count_usage(usage, estimate_tokens(_prompt_text(messages)), estimate_tokens("".join(text)), counted=True)


def error_of(data: dict[str, Any]) -> LlmError | None:
    """The failure a JSON answer of HTTP 200 reports, if it is one: OpenAI's error object (some
    gateways), or ``{"object": "error", "message": …}`` (vLLM); a failed call, not an empty answer."""
    if "error" in data and not data.get("choices"):
        error = data["error"]
        said = error.get("message") if isinstance(error, dict) else error
    elif data.get("object") == "error":
        said = data.get("message")
    else:
        return None
    return LlmError(f"The LLM answered with an error: {str(said)[:300]}")


def refused_with_200(chunks: Any) -> None:
    """A stream asked for and answered as one JSON document (an error with HTTP 200) holds no event
    at all: read as a stream it would be an empty answer. Its error is raised instead."""
    response = getattr(chunks, "response", None)
    if response is None or "json" not in response.headers.get("content-type", ""):
        return
    try:
        data = json.loads(response.read())
    except ValueError:
        data = {}
    finally:
        chunks.close()
    failed = error_of(data) if isinstance(data, dict) else None
    raise failed or LlmError("The LLM answered a stream with a JSON document that is not an error.")


def count_usage(usage: Usage | None, prompt: int, completion: int, counted: bool = False) -> None:
    """The call's tokens, to the caller's usage and to the metrics."""
    LLM_TOKENS.labels("prompt").inc(prompt)
    LLM_TOKENS.labels("completion").inc(completion)
    if usage is not None:
        usage.add(prompt, completion, counted)


def _prompt_text(messages: list[ChatMessage] | list[dict[str, Any]]) -> str:
    return "\n".join(m.get("content") or "" for m in messages)
