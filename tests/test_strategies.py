"""refine and map-reduce over packs, with an in-process LLM that records what it is asked."""

from __future__ import annotations

import threading
from collections.abc import Iterator

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
