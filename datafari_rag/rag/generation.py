"""The answer's last LLM call, streamed or not, and the progress of the calls before it: what every
answer strategy ends with (:mod:`.answer_strategies`)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Generator
from itertools import chain
from typing import Any

from ..llm import LlmService, Usage
from .citations import SourcesUsedFilter, clean_answer
from .reasoning import AnswerAfterReasoning
from .strategies import FinalCall
from .thinking import ThinkingSplitter, without_thinking
from .turn import Event

Progress = Callable[[str, int, int | None], None]


def final_answer(
    llm: LlmService, final: FinalCall, usage: Usage, stream: bool, reasoning: bool = False
) -> Generator[Event, None, str]:
    """Runs the last call (streamed or not); returns the raw answer. Streamed pieces go out
    without the SOURCES_USED line, and with ``reasoning`` (cot) without the steps before the
    answer: what is shown is what the final text will be."""
    if final.prompt is None:
        return final.fallback
    if not stream:
        text = without_thinking(llm.generate(final.prompt.messages(), usage))
        return text if clean_answer(text) else final.fallback
    pieces: list[str] = []
    thinking, shown = ThinkingSplitter(), SourcesUsedFilter()
    answer = AnswerAfterReasoning() if reasoning else None
    for raw_piece in chain(llm.stream(final.prompt.messages(), usage), [None]):
        thought, piece = thinking.feed(raw_piece) if raw_piece is not None else thinking.finish()
        if thought:  # a reasoning model's thoughts: their own events, never the answer
            yield Event("think", {"text": thought})
        pieces.append(piece)
        if visible := shown.feed(answer.feed(piece) if answer else piece):
            yield Event("message.delta", {"text": visible})
    if visible := shown.feed(answer.finish()) + shown.finish() if answer else shown.finish():
        yield Event("message.delta", {"text": visible})
    text = "".join(pieces)
    if clean_answer(text):
        return text
    if final.fallback:  # nothing came: the refine chain's last answer stands, shown whole
        yield Event("message.delta", {"text": final.fallback})
    return final.fallback


def ignore(name: str, step: int, of: int | None) -> None:
    """Progress of a call nobody watches."""


def with_progress(run: Callable[[Progress], FinalCall]) -> Generator[Event, None, FinalCall]:
    """Runs a strategy in a thread, yielding its progress as ``phase`` events as they happen."""
    events: queue.Queue[Event | None] = queue.Queue()
    outcome: dict[str, Any] = {}

    def progress(name: str, step: int, of: int | None) -> None:
        events.put(Event("phase", {"name": name, "step": step, **({"of": of} if of else {})}))

    def work() -> None:
        try:
            outcome["final"] = run(progress)
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc
        finally:
            events.put(None)

    threading.Thread(target=work, daemon=True, name="rag-strategy").start()
    while (event := events.get()) is not None:
        yield event
    if "error" in outcome:
        raise outcome["error"]
    final: FinalCall = outcome["final"]
    return final
