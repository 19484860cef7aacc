"""The semantic and proposition chunkers and the chunk evaluator: the real embedding model cuts
where the topic changes, the recording LLM writes propositions and scores chunks."""

from __future__ import annotations

import json

import pytest

from datafari_rag.agent.model import SentenceEmbedder
from datafari_rag.config import ConfigError, Settings, checked
from datafari_rag.indexing.chunkers import chunk_document, custom, semantic_chunks, sentences
from datafari_rag.llm import OpenAiLlmService
from datafari_rag.llm.params import LlmParams
from datafari_rag.testing.fake_llm import FakeLlm

CATS = (
    "Cats sleep for most of the day. A cat grooms its fur with its rough tongue. "
    "Kittens open their eyes after about ten days. Cats purr when they are content. "
)
TAX = (
    "The value added tax is charged on most goods and services. Companies file their tax return every quarter. "
    "A late tax payment is charged interest. The tax office audits the accounts of large companies. "
)
CHARS = Settings(vector_chunk_unit="characters", vector_chunk_size=400, vector_min_chunk_length=10)


def llm(fake_llm_server: tuple[FakeLlm, str]) -> OpenAiLlmService:
    return OpenAiLlmService(LlmParams.of(Settings(llm_endpoint=fake_llm_server[1], llm_max_retries=1)))


def test_semantic_chunks_end_where_the_topic_changes(embedder: SentenceEmbedder) -> None:
    chunks = semantic_chunks(CATS + TAX, 400, 75, lambda texts: embedder.embed(texts).tolist())
    assert len(chunks) >= 2 and all(len(c) <= 400 for c in chunks)
    assert not any("cat" in c.lower() and "tax" in c.lower() for c in chunks), chunks  # no chunk mixes both
    assert " ".join(chunks) == " ".join((CATS + TAX).split())  # nothing lost, nothing added


def test_sentences_longer_than_the_size_are_cut_at_words() -> None:
    long = "word " * 300
    pieces = sentences(f"Short one. {long}", 100)
    assert pieces[0] == "Short one." and all(len(p) <= 100 for p in pieces)


def test_propositions_replace_the_text_and_are_grouped_up_to_the_size(
    fake_llm: FakeLlm, fake_llm_server: tuple[FakeLlm, str]
) -> None:
    statements = [f"Statement number {i} says one fact about pumps." for i in range(12)]
    fake_llm.answer = lambda prompt: json.dumps({"propositions": statements}) if "Task: propositions" in prompt else ""
    settings = CHARS.replace(vector_chunker="proposition", vector_chunk_size=200)
    report = chunk_document("The pumps text. " * 20, settings, None, llm(fake_llm_server))
    assert " ".join(report.chunks) == " ".join(statements)
    assert all(len(c) <= 200 for c in report.chunks) and len(report.chunks) >= 3
    assert "Task: propositions" in fake_llm.prompts()[0] and "The pumps text." in fake_llm.prompts()[0]


def test_a_proposition_reply_that_is_not_json_keeps_the_text_s_sentences(
    fake_llm: FakeLlm, fake_llm_server: tuple[FakeLlm, str]
) -> None:
    fake_llm.answer = lambda prompt: "I cannot do that."
    settings = CHARS.replace(vector_chunker="proposition")
    report = chunk_document(CATS, settings, None, llm(fake_llm_server))
    assert " ".join(report.chunks) == " ".join(CATS.split())


def test_the_evaluator_drops_chunks_below_the_threshold_and_keeps_unscored_ones(
    fake_llm: FakeLlm, fake_llm_server: tuple[FakeLlm, str]
) -> None:
    def score(prompt: str) -> str:
        if "Home | Contact" in prompt:
            return '{"score": 0.1}'
        if "purr" in prompt:
            return "no idea"  # no score: kept
        return '{"score": 0.95}'

    fake_llm.answer = score
    text = "Home | Contact | Legal notice | Sitemap\n\n" + CATS + "\n\n" + TAX
    settings = CHARS.replace(
        vector_chunk_size=120, vector_chunker_evaluator=True, vector_chunker_evaluator_threshold=0.9
    )
    report = chunk_document(text, settings, None, llm(fake_llm_server))
    assert report.rejected == 1 and not any("Home | Contact" in c for c in report.chunks)
    assert any("purr" in c for c in report.chunks) and any("tax return" in c for c in report.chunks)
    assert sum("Task: chunk evaluation" in p for p in fake_llm.prompts()) == report.rejected + len(report.chunks)


def test_what_the_sidecar_must_cut_and_what_needs_characters() -> None:
    assert not custom(Settings())
    assert custom(CHARS.replace(vector_chunker="semantic")) and custom(Settings(vector_chunker_evaluator=True))
    with pytest.raises(ConfigError, match=r"vector\.chunksize\.unit=characters"):
        checked(Settings(vector_chunker="semantic"))
