"""Fallback models: the next model answers only what the previous could not begin."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from datafari_rag.llm import LlmError
from datafari_rag.llm.fallback import FallbackLlm, ToolFallbackLlm, with_fallbacks


class Model:
    """A model that answers, fails at once, or fails after ``pieces`` streamed pieces."""

    def __init__(self, name: str, fails: bool = False, pieces: int | None = None) -> None:
        self.name, self.fails, self.pieces, self.calls = name, fails, pieces, 0

    def generate(self, messages: list, usage: object = None) -> str:
        self.calls += 1
        if self.fails:
            raise LlmError(f"{self.name} is down")
        return f"answer of {self.name}"

    def stream(self, messages: list, usage: object = None) -> Iterator[str]:
        self.calls += 1
        for i in range(3):
            if self.fails or (self.pieces is not None and i >= self.pieces):
                raise LlmError(f"{self.name} broke")
            yield f"{self.name}{i} "


def test_each_model_is_tried_in_turn_until_one_answers() -> None:
    a, b, c = Model("a", fails=True), Model("b", fails=True), Model("c")
    assert FallbackLlm([a, b, c], ["a", "b", "c"]).generate([]) == "answer of c"
    assert (a.calls, b.calls, c.calls) == (1, 1, 1)
    with pytest.raises(LlmError, match="b is down"):
        FallbackLlm([Model("a", fails=True), Model("b", fails=True)], ["a", "b"]).generate([])


def test_a_stream_falls_back_only_before_its_first_piece() -> None:
    assert "".join(FallbackLlm([Model("a", fails=True), Model("b")], ["a", "b"]).stream([])) == "b0 b1 b2 "
    broken, spare = Model("a", pieces=1), Model("b")
    pieces = FallbackLlm([broken, spare], ["a", "b"]).stream([])
    assert next(pieces) == "a0 "
    with pytest.raises(LlmError, match="a broke"):
        list(pieces)
    assert spare.calls == 0  # a second model would begin another answer


def test_without_fallbacks_the_model_is_used_as_it_is_and_tools_follow_the_model() -> None:
    built: list[str] = []

    def build(name: str) -> Model:
        built.append(name)
        return Model(name)

    alone = with_fallbacks(build, "a", [])
    assert isinstance(alone, Model) and built == ["a"]
    chained = with_fallbacks(build, "a", ["b"])
    assert type(chained) is FallbackLlm and built == ["a", "a", "b"]  # Model has no chat: no tools

    class ToolModel(Model):
        def chat(self, messages: list, tools: list | None, usage: object = None) -> str:
            return self.generate(messages)

    assert isinstance(with_fallbacks(lambda n: ToolModel(n), "a", ["b"]), ToolFallbackLlm)
