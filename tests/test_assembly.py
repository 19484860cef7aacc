"""Context assembly without Solr: floor, segments, duplicates, caps and the token budget."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from datafari_rag.agent.model import SentenceEmbedder
from datafari_rag.config import ConfigError, Settings
from datafari_rag.llm import ChatMessage, LlmError, Usage
from datafari_rag.rag.assembly import (
    AssemblyParams,
    assemble,
    best_segment,
    capped_per_source,
    deduplicated,
    llm_segment,
    semantic_deduplicated,
    token_counter,
    within_budget,
)
from datafari_rag.retrieval.base import Snippet


def snip(content: str, url: str = "u1", score: float = 1.0) -> Snippet:
    return Snippet(url, "Title", url, content, score)


def test_exact_and_near_duplicates_are_dropped_after_the_better_one() -> None:
    base = "The cooling pump is inspected every Monday by the day shift team of building four."
    found = [
        snip(base, "a"),
        snip(base.upper().replace(" ", "  "), "b"),  # the same words
        snip(base.replace("four", "five"), "c"),  # one word of 15 changed: cosine 0.93
        snip(base + " It takes an hour.", "d"),
        snip("Valves are replaced every five years.", "e"),
    ]
    assert [x.url for x in deduplicated(found, 0.95)] == ["a", "c", "d", "e"]
    assert [x.url for x in deduplicated(found, 0.9)] == ["a", "d", "e"]


def test_at_most_k_passages_per_source_the_best_ones() -> None:
    found = [snip("1", "a"), snip("2", "b"), snip("3", "a"), snip("4", "a"), snip("5", "b")]
    assert [x.content for x in capped_per_source(found, 2)] == ["1", "2", "3", "5"]
    assert capped_per_source(found, 0) == found


def test_the_best_segment_is_the_contiguous_run_with_most_question_words() -> None:
    filler = "Nothing to see in this sentence. " * 20
    key = "The valve pressure is checked weekly. The valve is replaced yearly. "
    text = filler + key + filler
    segment = best_segment(text, "When is the valve replaced?", 120)
    assert "The valve is replaced yearly." in segment and len(segment) <= 120
    assert best_segment("short text", "anything", 120) == "short text"


def test_the_token_budget_keeps_leading_chunks_and_at_least_one(tmp_path: Path) -> None:
    count = token_counter("")
    assert count("The pump") == 2  # WordPiece: one token per known word
    chunks = [snip("word " * 30, f"u{i}") for i in range(5)]
    assert len(within_budget(chunks, 70, count)) == 2  # title 1 + 30 words each
    assert len(within_budget(chunks, 5, count)) == 1
    assert within_budget(chunks, 0, count) == chunks
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ConfigError, match=r"context\.tokenizer"):
        token_counter(str(tmp_path / "bad.json"))


def test_the_floor_and_every_step_are_off_by_default() -> None:
    found = [snip("a", "1", 0.9), snip("a", "2", 0.1)]
    untouched = assemble(found, "q", AssemblyParams.of(Settings()), lambda x: pytest.fail("neighbours asked"))
    assert untouched == found
    floored = assemble(found, "q", AssemblyParams.of(Settings(context_min_relevance_score=0.5)), lambda x: x)
    assert [x.url for x in floored] == ["1"]


def test_semantic_deduplication_drops_paraphrases_the_word_counts_miss(embedder: SentenceEmbedder) -> None:
    """MATIH's semantic deduplication with the real model: a paraphrase in other words is dropped,
    which the lexical cosine keeps; a different statement stays."""
    found = [
        snip("The boiler is checked every week by the maintenance team.", "a"),
        snip("Each week, the maintenance crew inspects the boiler.", "b"),  # the same, in other words
        snip("Valves are replaced every five years.", "c"),
    ]

    def embed(texts: list[str]) -> list[list[float]]:
        return embedder.embed(texts).tolist()

    assert [x.url for x in deduplicated(found, 0.8)] == ["a", "b", "c"]  # few words in common
    assert [x.url for x in semantic_deduplicated(found, 0.8, embed)] == ["a", "c"]
    params = AssemblyParams.of(
        Settings(context_dedup=True, context_dedup_threshold=0.8, context_dedup_method="embedding")
    )
    assert [x.url for x in assemble(found, "boiler", params, lambda f: f, embed)] == ["a", "c"]

    def down(texts: list[str]) -> list[list[float]]:
        raise RuntimeError("the embedding service failed")

    assert [x.url for x in assemble(found, "boiler", params, lambda f: f, down)] == ["a", "b", "c"]  # lexical


class Copier:
    """An LLM that answers the segment prompt with a fixed reply (or fails), recording prompts."""

    def __init__(self, reply: str | None) -> None:
        self.reply, self.asked = reply, 0

    def generate(self, messages: list[ChatMessage], usage: Usage | None = None) -> str:
        self.asked += 1
        if self.reply is None:
            raise LlmError("down")
        return self.reply

    def stream(self, messages: list[ChatMessage], usage: Usage | None = None) -> Iterator[str]:
        yield self.generate(messages, usage)


LONG = (
    "The site has three buildings. Building A holds the offices. "
    "The boiler in building B is serviced every March by an outside firm. "
    "Building C is the warehouse, open from six to six."
)


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        ("The boiler in building B is serviced every March by an outside firm.", "llm"),
        ("The boiler is serviced each March.", "lexical"),  # a paraphrase is not a part of the passage
        ("NONE", "lexical"),
        (LONG, "lexical"),  # longer than asked
        (None, "lexical"),  # the LLM failed
    ],
)
def test_the_llm_segment_is_kept_only_when_it_is_a_part_of_the_passage(reply: str | None, kept: str) -> None:
    """RAG.NET's relevant-segment extraction by the LLM, checked against the passage; the lexical
    segment otherwise; a passage that fits is not sent to the LLM."""
    llm = Copier(reply)
    params = AssemblyParams.of(Settings(context_segment_max_chars=90, context_segment_method="llm"))
    extract = partial(llm_segment, llm, Usage())
    [found] = assemble([snip(LONG)], "When is the boiler serviced?", params, lambda f: f, None, extract)
    lexical = best_segment(LONG, "When is the boiler serviced?", 90)
    assert found.content == (reply if kept == "llm" else lexical) and llm.asked == 1
    assemble([snip("Short.")], "When?", params, lambda f: f, None, extract)
    assert llm.asked == 1
