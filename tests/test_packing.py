"""Packing snippets into prompts under the size limit, without Solr or an LLM."""

from __future__ import annotations

import pytest

from datafari_rag.rag.packing import SEPARATOR, Item, PromptTooLarge, take_pack


def render(snippets: str) -> str:
    return f"Instructions.\n{snippets}\nQuestion?"


def items(*texts: str) -> list[Item]:
    return [Item(t, lambda c: f"<d>{c}</d>") for t in texts]


def test_as_many_items_as_fit_and_the_rest_left_over() -> None:
    pool = items("a" * 30, "b" * 30, "c" * 30)
    limit = len(render(SEPARATOR.join(x.text() for x in pool[:2])))
    prompt, rest = take_pack(pool, render, limit)
    assert prompt == render(SEPARATOR.join(x.text() for x in pool[:2])) and len(prompt) <= limit
    assert [x.content for x in rest] == ["c" * 30]


def test_an_item_too_large_alone_is_cut_never_sent_over() -> None:
    [big] = items("x" * 500)
    prompt, rest = take_pack([big], render, 100)
    assert len(prompt) <= 100 and rest == []
    assert "xxx" in prompt and len(render(big.text())) > 100


def test_min_items_share_the_room_so_a_merge_progresses() -> None:
    pool = items("p" * 200, "q" * 200, "r" * 10)
    prompt, rest = take_pack(pool, render, 150, min_items=2)
    assert len(prompt) <= 150 and "p" in prompt and "q" in prompt
    assert [x.content for x in rest] == ["r" * 10]


def test_a_template_over_the_limit_is_an_error() -> None:
    with pytest.raises(PromptTooLarge):
        take_pack(items("a"), lambda s: "T" * 200 + s, 100)
