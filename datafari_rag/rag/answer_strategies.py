"""``rag.strategy``: what an answer does beyond one search and one last call, each strategy an
object with its own parameters (read once from the configuration by ``of``) and its own part of
two steps: more searches after retrieval (``multihop``), and how the answer is written
(``cot``, ``reflect``, ``tot``). The pipeline asks a strategy these, never its name; the calls
themselves are :mod:`.reasoning`'s."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import ClassVar

from ..config import Settings
from ..llm import LlmService
from ..retrieval import Snippet
from .citations import clean_answer
from .generation import final_answer
from .reasoning import Check, followup, reflect, split_reasoning, tree_of_thought
from .strategies import FinalCall
from .turn import Event, Turn

Search = Callable[[str], list[Snippet]]  # one more search (the reranker's, with the user's access)


@dataclass(frozen=True)
class Simple:
    """One answer: the last call's, streamed as it comes."""

    name: ClassVar[str] = "simple"
    reasoning: ClassVar[bool] = False  # the prompt asks for the reasoning steps before the answer

    @classmethod
    def of(cls, settings: Settings) -> Simple:
        return cls()

    def more_searches(self, turn: Turn, llm: LlmService, search: Search) -> Iterator[Event]:
        """After retrieval: nothing more."""
        return iter(())

    def write(self, turn: Turn, llm: LlmService, limit: int) -> Generator[Event, None, None]:
        """Sets ``turn.raw`` (and, for some, ``turn.faithfulness`` and reasoning steps)."""
        turn.raw = yield from final_answer(llm, _final(turn), turn.usage, turn.stream)


@dataclass(frozen=True)
class ChainOfThought(Simple):
    """The model writes its reasoning steps, then the answer; the steps are returned apart
    (``reasoning_steps``), never shown as the answer nor streamed."""

    name: ClassVar[str] = "cot"
    reasoning: ClassVar[bool] = True

    @classmethod
    def of(cls, settings: Settings) -> ChainOfThought:
        return cls()

    def write(self, turn: Turn, llm: LlmService, limit: int) -> Generator[Event, None, None]:
        raw = yield from final_answer(llm, _final(turn), turn.usage, turn.stream, reasoning=True)
        written, turn.raw = split_reasoning(raw)
        turn.steps += written


@dataclass(frozen=True)
class Reflect(Simple):
    """The draft is checked against the documents (which statements they support), then corrected
    while some are not, for at most ``max_rounds`` rounds; nothing is shown before."""

    name: ClassVar[str] = "reflect"
    max_rounds: int = 1  # rag.reflect.maxRounds

    @classmethod
    def of(cls, settings: Settings) -> Reflect:
        return cls(settings.reflect_max_rounds)

    def write(self, turn: Turn, llm: LlmService, limit: int) -> Generator[Event, None, None]:
        draft = yield from final_answer(llm, _final(turn), turn.usage, stream=False)
        yield Event("phase", {"name": "rag:reflect"})
        raw, checks = reflect(llm, turn.ctx, turn.items, draft, limit, self.max_rounds, turn.usage)
        turn.steps += [_check_step(n, c) for n, c in enumerate(checks, start=1)]
        if turn.stream and clean_answer(raw):
            yield Event("message.delta", {"text": clean_answer(raw)})
        turn.raw, turn.faithfulness = raw, checks[-1].faithfulness if checks else None


@dataclass(frozen=True)
class MultiHop(Simple):
    """The model reads what was found and may ask for one more search, at most ``max_hops``
    times; what each finds that is new joins the passages."""

    name: ClassVar[str] = "multihop"
    max_hops: int = 2  # rag.multihop.maxHops

    @classmethod
    def of(cls, settings: Settings) -> MultiHop:
        return cls(settings.multihop_max_hops)

    def more_searches(self, turn: Turn, llm: LlmService, search: Search) -> Iterator[Event]:
        searches = list(turn.queries)
        for hop in range(1, self.max_hops + 1):
            query = followup(llm, turn.question, [x.content for x in turn.found], searches, turn.usage)
            if query is None:
                break
            yield Event("phase", {"name": "rag:multihop", "hop": hop, "query": query})
            known = {(x.id, x.content) for x in turn.found}
            turn.found += [x for x in search(query) if (x.id, x.content) not in known]
            searches.append(query)
            turn.steps.append(f"search: {query}")


@dataclass(frozen=True)
class TreeOfThought(Simple):
    """Tree of thought (MATIH's): ``branches`` candidate answers, each written to read the
    documents differently from the others, each scored by the faithfulness check; the best one is
    the root of the next level, for ``depth`` levels; the best scored of all is kept."""

    name: ClassVar[str] = "tot"
    branches: int = 3  # rag.tot.branches
    depth: int = 2  # rag.tot.depth

    @classmethod
    def of(cls, settings: Settings) -> TreeOfThought:
        return cls(settings.tot_branches, settings.tot_depth)

    def write(self, turn: Turn, llm: LlmService, limit: int) -> Generator[Event, None, None]:
        yield Event("phase", {"name": "rag:tree of thought"})
        raw, tried = tree_of_thought(llm, turn.ctx, turn.items, limit, self.branches, self.depth, turn.usage)
        best = max(tried, key=lambda b: b.score, default=None)
        turn.steps += [b.step() for b in tried]
        if best is not None:
            turn.steps.append(f"kept: branch {best.level}.{best.number}")
        if turn.stream and clean_answer(raw):
            yield Event("message.delta", {"text": clean_answer(raw)})
        turn.raw = raw
        turn.faithfulness = best.score if best is not None and best.check is not None else None


AnswerStrategy = Simple  # every strategy is one: the base is the simple answer
# each strategy of the registry (registry.STRATEGIES), by its name
ANSWER_STRATEGIES: dict[str, type[Simple]] = {
    s.name: s for s in (Simple, ChainOfThought, Reflect, MultiHop, TreeOfThought)
}


def _final(turn: Turn) -> FinalCall:
    assert turn.final is not None, "the pack step comes before the answer is written"
    return turn.final


def _check_step(number: int, check: Check) -> str:
    unsupported = "; ".join(check.unsupported)
    verdict = f"check {number}: {check.supported} of {check.statements} statements supported by the sources"
    return verdict + (f" (not supported: {unsupported})" if unsupported else "")
