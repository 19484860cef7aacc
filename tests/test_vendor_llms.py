"""``ai.llm.service=anthropic|gemini``: the vendors' own SDKs against local recording stubs of
their APIs — the prompt as each API takes it (system apart, alternating turns), the answer's
temperature and length, reported usage, streaming, retries within the deadline, clear failures."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from datafari_rag.config import Settings
from datafari_rag.llm import LlmError, Usage
from datafari_rag.llm.anthropic_service import AnthropicLlmService
from datafari_rag.llm.gemini_service import GeminiLlmService
from datafari_rag.llm.sampling import sampled_at
from datafari_rag.services import llm_service
from datafari_rag.testing.servers import serve
from datafari_rag.testing.vendor_stubs import AnthropicStub, GeminiStub

MESSAGES = [
    {"role": "system", "content": "Answer from the documents."},
    {"role": "user", "content": "Earlier question"},
    {"role": "assistant", "content": "Earlier answer"},
    {"role": "user", "content": "Documents: ..."},
    {"role": "user", "content": "Question: how many days?"},
]


@pytest.fixture(params=["anthropic", "gemini"])
def vendor(request: pytest.FixtureRequest) -> Iterator[tuple[str, Any, Settings]]:
    stub = AnthropicStub() if request.param == "anthropic" else GeminiStub()
    stub.answer = lambda body: "Twenty five days [1]."
    with serve(stub.app()) as url:
        settings = Settings(
            llm_service=request.param,
            llm_endpoint=url,
            llm_token="test-key",
            llm_model="claude-test" if request.param == "anthropic" else "gemini-test",
            llm_temperature=0.2,
            llm_max_tokens=300,
            llm_max_retries=2,
        )
        yield request.param, stub, settings


def sent_prompt(kind: str, body: dict[str, Any]) -> tuple[str, list[tuple[str, str]], float | None, int]:
    """(system, turns, temperature, max tokens) of a recorded request, whatever the vendor."""
    if kind == "anthropic":
        turns = [(m["role"], m["content"]) for m in body["messages"]]
        return body.get("system", ""), turns, body.get("temperature"), body["max_tokens"]
    config = body["generationConfig"]
    turns = [("assistant" if c["role"] == "model" else "user", c["parts"][0]["text"]) for c in body["contents"]]
    system = body["systemInstruction"]["parts"][0]["text"]
    return system, turns, config["temperature"], config["maxOutputTokens"]


def test_the_prompt_usage_and_answer_go_through_the_vendors_sdk(vendor: tuple[str, Any, Settings]) -> None:
    kind, stub, settings = vendor
    llm = llm_service(settings)
    assert isinstance(llm, AnthropicLlmService if kind == "anthropic" else GeminiLlmService)
    usage = Usage()
    assert llm.generate(MESSAGES, usage) == "Twenty five days [1]."
    system, turns, temperature, max_tokens = sent_prompt(kind, stub.requests[-1])
    assert system == "Answer from the documents."
    assert turns == [
        ("user", "Earlier question"),
        ("assistant", "Earlier answer"),
        ("user", "Documents: ...\n\nQuestion: how many days?"),  # consecutive user messages joined
    ]
    # Anthropic's Messages API takes no temperature (the model decides)
    assert (temperature, max_tokens) == (None if kind == "anthropic" else 0.2, 300)
    assert usage.as_dict()["estimated"] is False and usage.prompt_tokens in (11, 13) and usage.completion_tokens == 4


def test_a_stream_gives_the_same_text_piece_by_piece_with_the_answers_temperature(
    vendor: tuple[str, Any, Settings],
) -> None:
    kind, stub, settings = vendor
    usage = Usage()
    with sampled_at(0.9):
        pieces = list(llm_service(settings).stream(MESSAGES, usage))
    assert len(pieces) > 1 and "".join(pieces) == "Twenty five days [1]."
    assert sent_prompt(kind, stub.requests[-1])[2] == (None if kind == "anthropic" else 0.9)
    assert usage.completion_tokens == 4 and not usage.as_dict()["estimated"]


def test_a_busy_vendor_is_tried_again_and_a_bad_request_fails_clearly(vendor: tuple[str, Any, Settings]) -> None:
    kind, stub, settings = vendor
    stub.fail = [529 if kind == "anthropic" else 503, 429]
    assert llm_service(settings).generate(MESSAGES) == "Twenty five days [1]."
    assert len(stub.requests) == 3
    stub.fail = [400]
    with pytest.raises(LlmError) as failed:
        llm_service(settings).generate(MESSAGES)
    assert ("Anthropic" if kind == "anthropic" else "Gemini") in str(failed.value)
    assert len(stub.requests) == 4  # a bad request is not tried again
