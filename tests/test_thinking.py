"""A reasoning model's <think> text is split from the answer, whatever the stream's pieces."""

from __future__ import annotations

import random

import pytest

from datafari_rag.rag.citations import cited_numbers, clean_answer
from datafari_rag.rag.thinking import ThinkingSplitter, without_thinking

CASES = [
    (
        "<think>Leave rules: 25 days [2].</think>Employees get 25 days [1].",
        "Leave rules: 25 days [2].",
        "Employees get 25 days [1].",
    ),
    ("No thoughts here < think > at all.", "", "No thoughts here < think > at all."),
    ("<THINK>a</Think>b<think>c</think>d", "ac", "bd"),
    ("Answer first.<think>then a thought never closed", "then a thought never closed", "Answer first."),
    ("<thin", "", "<thin"),
]


@pytest.mark.parametrize(("raw", "thought", "answer"), CASES)
def test_every_split_gives_the_same_thoughts_and_answer(raw: str, thought: str, answer: str) -> None:
    assert without_thinking(raw) == answer
    rng = random.Random(raw)
    for _ in range(300):
        splitter, thoughts, answers, at = ThinkingSplitter(), [], [], 0
        while at < len(raw):
            step = rng.randint(1, 5)
            t, a = splitter.feed(raw[at : at + step])
            thoughts.append(t)
            answers.append(a)
            at += step
        t, a = splitter.finish()
        assert ("".join(thoughts) + t, "".join(answers) + a) == (thought, answer)


def test_a_thought_is_neither_shown_nor_cited() -> None:
    raw = "<think>Maybe [3]. SOURCES_USED: 3</think>Employees get 25 days [1].\nSOURCES_USED: 1"
    assert clean_answer(raw) == "Employees get 25 days [1]."
    assert cited_numbers(raw) == [1]
