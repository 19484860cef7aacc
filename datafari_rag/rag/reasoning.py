"""The LLM calls of the generation strategies beyond one answer (``rag.strategy``; each strategy
is an object of :mod:`.answer_strategies`):

- ``cot``: the model writes its reasoning steps, then the answer; the steps are returned apart
  (``reasoning_steps``) and never shown as the answer, nor streamed;
- ``reflect``: the draft is checked against the documents (which statements they support), then
  corrected when some are not, for at most ``rag.reflect.maxRounds`` rounds;
- ``multihop``: the model reads what was found and may ask for one more search, at most
  ``rag.multihop.maxHops`` times (see :func:`followup`);
- ``tot`` (tree of thought, MATIH's): ``rag.tot.branches`` candidate answers, each written to read
  the documents differently from the others, each scored by the faithfulness check; the best one
  is the root of the next level, for ``rag.tot.depth`` levels; the best scored of all is kept
  (see :func:`tree_of_thought`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..llm import LlmError, LlmService, Usage
from ..prompts import Prompt, PromptContext
from .citations import clean_answer
from .packing import Item, PromptTooLarge, take_pack
from .rewriting import json_reply

_ANSWER = re.compile(r"^[ \t*#]*ANSWER[ \t*]*:[ \t*]*", re.I | re.M)
_REASONING = re.compile(r"^[ \t*#]*REASONING[ \t*]*:?", re.I | re.M)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
SHOWN = 300  # characters of each passage the multihop decision reads


def split_reasoning(text: str) -> tuple[list[str], str]:
    """(steps, answer) of a ``REASONING: … ANSWER: …`` reply; a reply without ``ANSWER:`` is all answer."""
    found = _ANSWER.search(text)
    if not found:
        return [], text
    head = _REASONING.sub("", text[: found.start()], count=1)
    steps = [_BULLET.sub("", line).strip() for line in head.splitlines()]
    return [s for s in steps if s], text[found.end() :].strip()


class AnswerAfterReasoning:
    """Streams only what follows the ``ANSWER:`` line: the reasoning is held back. A reply that
    never writes the marker is given whole at the end."""

    def __init__(self) -> None:
        self.held = ""
        self.answering = False
        self.started = False  # a visible character was given (blank space before it is not)

    def feed(self, piece: str) -> str:
        if not self.answering:
            self.held += piece
            found = _ANSWER.search(self.held)
            if not found:
                return ""
            self.answering = True
            piece = self.held[found.end() :]
        if not self.started:
            piece = piece.lstrip()
            self.started = bool(piece)
        return piece

    def finish(self) -> str:
        return "" if self.answering else self.held


@dataclass(frozen=True)
class Check:
    """What the faithfulness check found: how many statements, how many the documents support."""

    statements: int
    supported: int
    unsupported: list[str] = field(default_factory=list)

    @property
    def faithfulness(self) -> float:
        return self.supported / self.statements if self.statements else 1.0


def _documents_prompt(ctx: PromptContext, template: str, items: list[Item], limit: int, **extra: Any) -> Prompt:
    """A prompt holding as many of the documents as fit (the first pack)."""
    prompt, _ = take_pack(items, lambda s: ctx.prompt(template, snippets=s, **extra), limit)
    return prompt


def check(
    llm: LlmService, ctx: PromptContext, items: list[Item], answer: str, limit: int, usage: Usage | None
) -> Check | None:
    """The LLM's faithfulness check of ``answer`` against the documents (None: no usable verdict)."""
    try:
        prompt = _documents_prompt(ctx, "reflect_check", items, limit, previous_answer=clean_answer(answer))
        reply = llm.generate(prompt.messages(), usage)
    except (LlmError, PromptTooLarge):
        return None
    data = json_reply(reply)
    if data is None:
        return None
    try:
        statements, supported = int(data["statements"]), int(data["supported"])
    except (ValueError, KeyError, TypeError):
        return None
    unsupported = [s for s in data.get("unsupported") or [] if isinstance(s, str) and s.strip()]
    if statements < 0 or not 0 <= supported <= statements:
        return None
    return Check(statements, supported, unsupported)


def reflect(
    llm: LlmService,
    ctx: PromptContext,
    items: list[Item],
    draft: str,
    limit: int,
    rounds: int,
    usage: Usage | None,
) -> tuple[str, list[Check]]:
    """Draft → check → corrected answer, while statements are unsupported and rounds remain.
    Returns the answer kept and every check made (the last one judges the answer kept)."""
    answer, checks = draft, []
    for _ in range(rounds):
        verdict = check(llm, ctx, items, answer, limit, usage)
        if verdict is None:
            break
        checks.append(verdict)
        if not verdict.unsupported and verdict.supported == verdict.statements:
            break
        try:
            prompt = _documents_prompt(
                ctx,
                "reflect_correct",
                items,
                limit,
                previous_answer=clean_answer(answer),
                unsupported=verdict.unsupported,
            )
            corrected = llm.generate(prompt.messages(), usage)
        except (LlmError, PromptTooLarge):
            break
        if not clean_answer(corrected):
            break
        answer = corrected
        if len(checks) == rounds:  # the corrected answer gets its own verdict
            final = check(llm, ctx, items, answer, limit, usage)
            if final is not None:
                checks.append(final)
    return answer, checks


@dataclass(frozen=True)
class Branch:
    """One candidate of the tree: where it stands (level, number), its text and its verdict."""

    level: int
    number: int
    answer: str
    check: Check | None

    @property
    def score(self) -> float:
        """Its faithfulness, 0 without a verdict; an abstention or an empty answer scores nothing."""
        return self.check.faithfulness if self.check is not None and self.check.statements else 0.0

    def step(self) -> str:
        verdict = (
            f"{self.check.supported} of {self.check.statements} statements supported"
            if self.check is not None
            else "no verdict"
        )
        return f"branch {self.level}.{self.number}: {verdict} (score {self.score:.2f})"


def tree_of_thought(
    llm: LlmService,
    ctx: PromptContext,
    items: list[Item],
    limit: int,
    branches: int,
    depth: int,
    usage: Usage | None,
) -> tuple[str, list[Branch]]:
    """Bounded tree of thought: at each of ``depth`` levels, ``branches`` candidates (each told the
    ones already written, and the best so far to improve on), each scored by the faithfulness
    check. Returns the best scored answer (the earliest on a tie) and every branch, in order; at
    most ``branches × depth`` answers and as many checks."""
    tried: list[Branch] = []
    best: Branch | None = None
    for level in range(1, depth + 1):
        root = best  # this level's candidates improve on the best of the levels before
        written: list[str] = []
        for number in range(1, branches + 1):
            try:
                prompt = _documents_prompt(
                    ctx,
                    "tot_branch",
                    items,
                    limit,
                    candidates=written,
                    previous_answer=clean_answer(root.answer) if root is not None else "",
                )
                answer = llm.generate(prompt.messages(), usage)
            except (LlmError, PromptTooLarge):
                continue
            if not clean_answer(answer):
                continue
            written.append(clean_answer(answer))
            branch = Branch(level, number, answer, check(llm, ctx, items, answer, limit, usage))
            tried.append(branch)
            if best is None or branch.score > best.score:
                best = branch
        if best is not None and best.score >= 1.0:  # every statement supported: nothing to improve
            break
    return (best.answer if best is not None else ""), tried


def followup(
    llm: LlmService, question: str, passages: list[str], searches: list[str], usage: Usage | None
) -> str | None:
    """The next search the model asks for after reading what was found, or None."""
    shown = [" ".join(p.split())[:SHOWN] for p in passages]
    prompt = PromptContext(question).prompt("multihop", passages=shown, searches=searches)
    try:
        reply = llm.generate(prompt.messages(), usage)
    except LlmError:
        return None
    value = (json_reply(reply) or {}).get("followup")
    if not isinstance(value, str) or not value.strip():
        return None
    query = " ".join(value.split())[:500]
    return None if query.lower() in {s.lower() for s in searches} else query
