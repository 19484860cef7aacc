"""How packed snippets become one answer: ``refine`` or ``mapreduce``.

refine: the first pack gives an answer, each next pack refines it (sequential by nature).
mapreduce: one call per pack, run concurrently (bounded by ``llm.maxConcurrent``), then merge
calls; partial answers that do not fit one merge prompt are merged in groups, recursively,
so none is ever dropped. One pack means one call and no merge.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from ..llm import ChatMessage, LlmService
from .packing import Item, take_pack
from .prompts import PromptContext, partial_answer_text


def _ask(llm: LlmService, prompt: str) -> str:
    messages: list[ChatMessage] = [{"role": "user", "content": prompt}]
    return llm.generate(messages).strip()


def _render_refining(ctx: PromptContext, template: str, previous: str, snippets: str) -> str:
    return ctx.prompt(template, snippets=snippets, previous_answer=previous)


def _packs(items: list[Item], render: Callable[[str], str], limit: int, min_items: int = 1) -> list[str]:
    prompts: list[str] = []
    while items:
        prompt, items = take_pack(items, render, limit, min_items)
        prompts.append(prompt)
    return prompts


def refine(
    llm: LlmService,
    ctx: PromptContext,
    items: list[Item],
    limit: int,
    first: str = "refine_initial",
    then: str = "refine_refining",
) -> str:
    prompt, rest = take_pack(items, lambda s: ctx.prompt(first, snippets=s), limit)
    answer = _ask(llm, prompt)
    while rest:
        previous = answer
        prompt, rest = take_pack(rest, partial(_render_refining, ctx, then, previous), limit)
        answer = _ask(llm, prompt) or previous
    return answer


def mapreduce(llm: LlmService, ctx: PromptContext, items: list[Item], limit: int, concurrency: int) -> str:
    prompts = _packs(items, lambda s: ctx.prompt("map", snippets=s), limit)
    if len(prompts) == 1:
        return _ask(llm, prompts[0])
    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(prompts)))) as pool:
        partials = [p for p in pool.map(lambda p: _ask(llm, p), prompts) if p]
        while True:
            answers = [Item(p, partial_answer_text) for p in partials]
            merges = _packs(answers, lambda s: ctx.prompt("merge", snippets=s), limit, min_items=2)
            if len(merges) <= 1:
                return _ask(llm, merges[0]) if merges else ""
            partials = [p for p in pool.map(lambda p: _ask(llm, p), merges) if p]
