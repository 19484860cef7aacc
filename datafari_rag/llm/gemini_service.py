"""``ai.llm.service=gemini``: Gemini through Google's own SDK (``google-genai``), the Gemini API at
``ai.api.endpoint`` (empty: Google's) with ``ai.api.token``; the deadline, retries, streaming and
usage of :mod:`.sdk_service`."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx2
from google import genai
from google.genai import errors, types

from .params import LlmParams
from .sdk_service import Call, Conversation, SdkLlmService


class RetryableGeminiError(Exception):
    """A Gemini API error a retry may get past (429, 5xx)."""


class GeminiLlmService(SdkLlmService):
    transient = (RetryableGeminiError, errors.ServerError, httpx2.TransportError)
    failures = (errors.APIError, httpx2.HTTPError, ValueError)
    vendor = "Gemini"

    def __init__(self, params: LlmParams) -> None:
        super().__init__(params)
        options = types.HttpOptions(base_url=params.endpoint or None, timeout=int(params.timeout * 1000))
        self.client = genai.Client(api_key=params.token or "no-key", http_options=options)

    def _config(self, prompt: Conversation, call: Call) -> types.GenerateContentConfig:
        return types.GenerateContentConfig(
            system_instruction=prompt.system or None,
            temperature=call.temperature,
            max_output_tokens=call.max_tokens,
            http_options=types.HttpOptions(timeout=max(1, int(call.timeout * 1000))),
        )

    @staticmethod
    def _contents(prompt: Conversation) -> list[types.Content]:
        return [
            types.Content(role="model" if role == "assistant" else "user", parts=[types.Part(text=text)])
            for role, text in prompt.turns
        ]

    def _complete(self, prompt: Conversation, call: Call) -> tuple[str, tuple[int, int] | None]:
        try:
            response = self.client.models.generate_content(
                model=call.model, contents=self._contents(prompt), config=self._config(prompt, call)
            )
        except errors.ClientError as exc:
            if exc.code == 429:
                raise RetryableGeminiError(str(exc)) from exc
            raise
        meta = response.usage_metadata
        reported = (meta.prompt_token_count or 0, meta.candidates_token_count or 0) if meta else None
        return response.text or "", reported

    def _open_stream(
        self, prompt: Conversation, call: Call
    ) -> tuple[Iterator[tuple[str, tuple[int | None, int | None]]], Callable[[], None]]:
        chunks = self.client.models.generate_content_stream(
            model=call.model, contents=self._contents(prompt), config=self._config(prompt, call)
        )

        def pieces() -> Iterator[tuple[str, tuple[int | None, int | None]]]:
            reported: tuple[int | None, int | None] = (None, None)
            for chunk in chunks:
                meta = chunk.usage_metadata
                if meta and meta.prompt_token_count is not None:
                    reported = (meta.prompt_token_count, meta.candidates_token_count or 0)
                yield chunk.text or "", reported

        def close() -> None:
            closer = getattr(chunks, "close", None)
            if closer is not None:
                closer()

        return pieces(), close
