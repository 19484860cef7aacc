"""How packed snippets become one answer: ``refine`` or ``mapreduce``.

refine: the first pack gives an answer, each next pack refines it (sequential by nature).
mapreduce: one call per pack, run concurrently (bounded by ``llm.maxConcurrent``), then merge
calls; partial answers that do not fit one merge prompt are merged in groups, recursively,
so none is ever dropped. One pack means one call and no merge.

Both run every call but the last and return that last one as a :class:`FinalCall`, so that the
caller can stream it (or not); ``progress`` is told of each intermediate call before it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

from ..llm import LlmService, Usage
from ..llm.deadline import carried
from ..prompts import Prompt, PromptContext, partial_answer_text
from .citations import clean_answer
from .packing import Item, take_pack

Progress = Callable[[str, int, int | None], None]  # (phase name, step, number of steps if known)


@dataclass(frozen=True)
class FinalCall:
    prompt: Prompt | None  # None when there is nothing left to ask
    fallback: str = ""  # the answer to keep if the final call returns nothing


def _ask(llm: LlmService, usage: Usage, prompt: Prompt) -> str:
    """An intermediate answer, without its SOURCES_USED line (its inline citations stay)."""
    return clean_answer(llm.generate(prompt.messages(), usage))


def _render_refining(ctx: PromptContext, template: str, previous: str, snippets: str) -> Prompt:
    return ctx.prompt(template, snippets=snippets, previous_answer=previous)


def _packs(items: list[Item], render: Callable[[str], Prompt], limit: int, min_items: int = 1) -> list[Prompt]:
    prompts: list[Prompt] = []
    while items:
        prompt, items = take_pack(items, render, limit, min_items)
        prompts.append(prompt)
    return prompts


def refine(
    llm: LlmService,
    usage: Usage,
    progress: Progress,
    ctx: PromptContext,
    items: list[Item],
    limit: int,
    first: str = "refine_initial",
    then: str = "refine_refining",
) -> FinalCall:
    prompt, rest = take_pack(items, lambda s: ctx.prompt(first, snippets=s), limit)
    answer, step = "", 1
    while rest:
        progress("rag:refine", step, None)
        answer = _ask(llm, usage, prompt) or answer
        prompt, rest = take_pack(rest, partial(_render_refining, ctx, then, answer), limit)
        step += 1
    return FinalCall(prompt, answer)


def mapreduce(
    llm: LlmService,
    usage: Usage,
    progress: Progress,
    ctx: PromptContext,
    items: list[Item],
    limit: int,
    concurrency: int,
) -> FinalCall:
    prompts = _packs(items, lambda s: ctx.prompt("map", snippets=s), limit)
    if len(prompts) == 1:
        return FinalCall(prompts[0])
    ask = carried(partial(_ask, llm, usage))  # the pool's threads keep the answer's deadline
    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(prompts)))) as pool:
        progress("rag:map", len(prompts), len(prompts))
        partials = [p for p in pool.map(ask, prompts) if p]
        while True:
            answers = [Item(p, partial_answer_text) for p in partials]
            merges = _packs(answers, lambda s: ctx.prompt("merge", snippets=s), limit, min_items=2)
            if len(merges) <= 1:
                return FinalCall(merges[0] if merges else None)
            progress("rag:merge", len(merges), len(merges))
            partials = [p for p in pool.map(ask, merges) if p]
