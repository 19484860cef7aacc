"""``ai.llm.service=anthropic``: Claude through Anthropic's own SDK (``anthropic``), its Messages
API at ``ai.api.endpoint`` (empty: Anthropic's) with ``ai.api.token``; the deadline, retries,
streaming and usage of :mod:`.sdk_service`. The Messages API of the SDK this product pins takes no
sampling temperature (the model decides): ``llm.temperature`` and a request's ``temperature`` are
not sent to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx2

from .params import LlmParams
from .sdk_service import Call, Conversation, SdkLlmService


class AnthropicLlmService(SdkLlmService):
    transient = (
        anthropic.APIConnectionError,  # unreachable or timed out
        anthropic.RateLimitError,
        anthropic.InternalServerError,  # 5xx, overloaded
        httpx2.TransportError,
    )
    failures = (anthropic.AnthropicError, httpx2.HTTPError)
    vendor = "Anthropic"

    def __init__(self, params: LlmParams) -> None:
        super().__init__(params)
        self.client = anthropic.Anthropic(
            api_key=params.token or "no-key",
            base_url=params.endpoint or None,
            timeout=params.timeout,
            max_retries=0,  # retried by the service, within the deadline
        )

    def _request(self, prompt: Conversation, call: Call) -> dict[str, Any]:
        return {
            "model": call.model,
            "max_tokens": call.max_tokens,
            "messages": [{"role": role, "content": text} for role, text in prompt.turns],
            **({"system": prompt.system} if prompt.system else {}),
            "timeout": httpx2.Timeout(call.timeout, connect=min(5.0, call.timeout)),
        }

    def _complete(self, prompt: Conversation, call: Call) -> tuple[str, tuple[int, int] | None]:
        message = self.client.messages.create(**self._request(prompt, call))
        text = "".join(block.text for block in message.content if block.type == "text")
        usage = message.usage
        return text, (usage.input_tokens, usage.output_tokens) if usage else None

    def _open_stream(
        self, prompt: Conversation, call: Call
    ) -> tuple[Iterator[tuple[str, tuple[int | None, int | None]]], Callable[[], None]]:
        events = self.client.messages.create(**self._request(prompt, call), stream=True)

        def pieces() -> Iterator[tuple[str, tuple[int | None, int | None]]]:
            prompt_tokens: int | None = None
            completion_tokens: int | None = None
            for event in events:
                if event.type == "message_start":
                    prompt_tokens = event.message.usage.input_tokens
                elif event.type == "message_delta":
                    completion_tokens = event.usage.output_tokens
                elif event.type == "content_block_delta" and event.delta.type == "text_delta":
                    yield event.delta.text, (prompt_tokens, completion_tokens)
                    continue
                yield "", (prompt_tokens, completion_tokens)

        return pieces(), events.close
