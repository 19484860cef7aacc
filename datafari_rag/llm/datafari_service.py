"""Datafari 6.1's "Datafari External LLM service" (``rag.template=datafari``): one POST to
``ai.api.endpoint`` with ``{"input": {"context", "question", "max_tokens", "temperature"}}``,
the answer in ``{"output": "…"}``.

The pipeline's prompts end with the question (``Question: …``): what comes before it is the
context. The service does not stream: a stream is the whole answer in one piece. Token usage is
estimated (the service reports none).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx

from ..config import ConfigError
from .deadline import ends as answer_ends
from .openai_service import estimate_tokens
from .params import LlmParams
from .sampling import temperature as sampled
from .service import QUESTION_INTRO, ChatMessage, LlmError, Usage

QUESTION = "\nQuestion: "


def split_prompt(messages: list[ChatMessage]) -> tuple[str, str]:
    """(context, question) of a prompt whose last message ends with the question, or is it
    (prompt.layout=message-per-document)."""
    last = messages[-1]["content"] if messages else ""
    if last.startswith(QUESTION_INTRO):
        return "\n\n".join(m["content"] for m in messages[:-1]).strip(), last.removeprefix(QUESTION_INTRO).strip()
    text = "\n\n".join(m["content"] for m in messages)
    context, found, question = text.rpartition(QUESTION)
    return (context.strip(), question.strip()) if found else ("", text.strip())


class DatafariLlmService:
    def __init__(self, params: LlmParams) -> None:
        if not params.endpoint:
            raise ConfigError("rag.template=datafari needs ai.api.endpoint: the service's URL")
        self.url = params.endpoint
        self.add_instructions = params.add_instructions  # rag.addInstructions
        self.max_tokens = params.max_tokens
        self.temperature = params.temperature
        self.deadline = params.deadline  # the whole call, every attempt
        self.timeout = params.timeout  # one attempt
        self.max_retries = params.max_retries
        headers = {"Authorization": f"Bearer {params.token}"} if params.token else {}
        self.client = httpx.Client(headers=headers)

    def generate(self, messages: list[ChatMessage], usage: Usage | None = None) -> str:
        sent = messages if self.add_instructions else [m for m in messages if m["role"] != "system"]
        context, question = split_prompt(sent)
        body = {
            "input": {
                "context": context,
                "question": question,
                "max_tokens": self.max_tokens,
                "temperature": sampled(self.temperature),
            }
        }
        ends = answer_ends(time.monotonic() + self.deadline)
        for attempt in range(self.max_retries + 1):
            left = ends - time.monotonic()
            if left <= 0:
                break
            last = attempt == self.max_retries
            try:
                wait = min(self.timeout, left)
                response = self.client.post(self.url, json=body, timeout=httpx.Timeout(wait, connect=min(5.0, wait)))
                response.raise_for_status()
                data = response.json()
            except httpx.HTTPStatusError as exc:  # a 5xx may pass; a 4xx will not
                if exc.response.status_code >= 500 and not last:
                    continue
                raise LlmError(f"the Datafari LLM service answered HTTP {exc.response.status_code}") from exc
            except httpx.HTTPError as exc:  # unreachable, timed out
                if not last:
                    continue
                raise LlmError(f"the Datafari LLM service failed: {exc}") from exc
            except ValueError as exc:
                raise LlmError("the Datafari LLM service answered something that is not JSON") from exc
            output = data.get("output") if isinstance(data, dict) else None
            if not isinstance(output, str):
                raise LlmError("the Datafari LLM service answered without a text 'output'")
            if usage is not None:
                usage.add(estimate_tokens(context + question), estimate_tokens(output), counted=True)
            return output
        raise LlmError(f"the Datafari LLM service did not answer within {self.deadline:.0f}s")

    def stream(self, messages: list[ChatMessage], usage: Usage | None = None) -> Iterator[str]:
        yield self.generate(messages, usage)
