"""refine and map-reduce over packs, with an in-process LLM that records what it is asked."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace

from datafari_rag.llm import ChatMessage, Usage
from datafari_rag.prompts import PromptContext, snippet_text
from datafari_rag.rag.packing import Item
from datafari_rag.rag.strategies import mapreduce, refine


class RecordingLlm:
    """Answers each prompt with a numbered reply and keeps every prompt."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self._lock = threading.Lock()

    def generate(self, messages: list[ChatMessage], usage: Usage | None = None) -> str:
        with self._lock:
            self.prompts.append("\n".join(m["content"] for m in messages))
            if usage is not None:
                usage.add(10, 2)
            return f"reply {len(self.prompts)}"

    def stream(self, messages: list[ChatMessage], usage: Usage | None = None) -> Iterator[str]:
        yield self.generate(messages, usage)


def docs(count: int, size: int) -> list[Item]:
    return [Item(f"Document {i} " + "w" * size, lambda c, i=i: snippet_text(f"T{i}", c)) for i in range(count)]


CTX = PromptContext("What is in the documents?")


def test_refine_asks_pack_by_pack_and_returns_the_last_call() -> None:
    llm, usage, steps = RecordingLlm(), Usage(), []
    final = refine(llm, usage, lambda *a: steps.append(a), CTX, docs(4, 1500), limit=2500)
    assert len(llm.prompts) == 3 and [s[1] for s in steps] == [1, 2, 3]
    assert "reply 3" in final.prompt.text and final.fallback == "reply 3"  # each refine carries the last answer
    assert all(len(p) <= 2500 for p in [*llm.prompts, final.prompt.text])
    assert usage.prompt_tokens == 30


def test_one_pack_is_one_call_and_no_merge() -> None:
    llm = RecordingLlm()
    final = mapreduce(llm, Usage(), lambda *a: None, CTX, docs(2, 50), limit=10_000, concurrency=4)
    assert llm.prompts == [] and "Document 0" in final.prompt.text and "Document 1" in final.prompt.text


def test_mapreduce_maps_every_pack_then_merges_every_partial_answer() -> None:
    llm, steps = RecordingLlm(), []
    final = mapreduce(llm, Usage(), lambda *a: steps.append(a), CTX, docs(6, 1500), limit=2500, concurrency=3)
    maps = [p for p in llm.prompts if p.startswith("Task: answer")]
    assert len(maps) == 6 and steps[0] == ("rag:map", 6, 6)
    assert all(f"reply {i}" in final.prompt.text for i in range(1, 7))  # none dropped
    assert final.prompt.text.startswith("Task: merge")


def test_the_61_layout_gives_each_document_its_own_message_and_counts_them_all() -> None:
    """prompt.layout=message-per-document: documents whose text holds blank lines (or the word
    document) stay whole, one user message each, then the question; packing counts every message."""
    ctx = PromptContext("What is in the documents?", layout="message-per-document")
    items = [
        Item(f"Part {i}.\n\nA <document> word, then more.", lambda c, i=i: snippet_text(f"T{i}", c, i + 1))
        for i in range(3)
    ]
    final = mapreduce(RecordingLlm(), Usage(), lambda *_: None, ctx, items, 40_000, 2)
    assert final.prompt is not None
    messages = final.prompt.messages()
    assert [m["role"] for m in messages] == ["system", "user", "user", "user", "user"]
    for i, message in enumerate(messages[1:-1]):
        assert message["content"].startswith(f'Here is one of the documents: <document number="{i + 1}" title="T{i}">')
        assert message["content"].endswith("</document>") and f"Part {i}.\n\nA <document> word" in message["content"]
    assert messages[-1]["content"] == "The user question is: What is in the documents?"
    assert len(final.prompt) == len("\n".join(m["content"] for m in messages))


def test_the_datafari_service_finds_the_question_of_either_layout() -> None:
    from datafari_rag.llm.datafari_service import split_prompt

    ctx = PromptContext("Which pump?")
    for layout in ("one-message", "message-per-document"):
        prompt = replace(ctx, layout=layout).prompt("map", snippets=snippet_text("T", "Pump 7.", 1))
        context, question = split_prompt(prompt.messages())
        assert question == "Which pump?" and "Pump 7." in context and "Which pump?" not in context, layout
