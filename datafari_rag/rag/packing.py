"""Packing snippets into prompts that never exceed ``prompt.max.request.size``.

The size counted is the whole rendered prompt (instructions, query, history, format, previous
answer and snippets, in every message), not the snippets alone. A snippet too large to fit on its own is cut,
so no prompt is ever sent over the limit.
"""

from __future__ import annotations

from collections.abc import Callable, Sized
from dataclasses import dataclass
from typing import TypeVar

SEPARATOR = "\n\n"
P = TypeVar("P", bound=Sized)  # a rendered prompt: its len() is what the limit counts


class PromptTooLarge(ValueError):
    """The prompt without any snippet is already over the limit."""


@dataclass(frozen=True)
class Item:
    """One thing to pack: its text is rendered by ``show`` (e.g. a titled document block)."""

    content: str
    show: Callable[[str], str]

    def text(self) -> str:
        return self.show(self.content)


def _cut(item: Item, fits: Callable[[Item], bool]) -> Item:
    """The longest prefix of ``item`` that ``fits`` (binary search on its length)."""
    if fits(item):
        return item
    low, high = 0, len(item.content)
    while low < high:
        middle = (low + high + 1) // 2
        if fits(Item(item.content[:middle], item.show)):
            low = middle
        else:
            high = middle - 1
    return Item(item.content[:low], item.show)


def _join(items: list[Item]) -> str:
    return SEPARATOR.join(x.text() for x in items)


def take_pack(items: list[Item], render: Callable[[str], P], limit: int, min_items: int = 1) -> tuple[P, list[Item]]:
    """The first prompt: as many leading items as fit; returns (prompt, items left over).

    When fewer than ``min_items`` fit, the first ``min_items`` are cut to equal shares of the
    room, so that a merge of partial answers always makes progress.
    """
    if len(render("")) > limit:
        raise PromptTooLarge(f"the prompt template alone is over {limit} characters")
    taken: list[Item] = []
    for item in items:
        if len(render(_join([*taken, item]))) > limit:
            break
        taken.append(item)
    want = min(min_items, len(items))
    if len(taken) >= want:
        return render(_join(taken)), items[len(taken) :]
    share = (limit - len(render(""))) // want - len(SEPARATOR)
    taken = [_cut(item, lambda cut: len(cut.text()) <= share) for item in items[:want]]
    head = taken[:-1]
    taken[-1] = _cut(taken[-1], lambda cut: len(render(_join([*head, cut]))) <= limit)
    prompt = render(_join(taken))
    if len(prompt) > limit:
        raise PromptTooLarge(f"{want} items cannot share a prompt of {limit} characters")
    return prompt, items[want:]
