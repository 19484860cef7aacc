"""Recording a turn while its answer is produced: the pipeline's events pass through unchanged
and the turn is written once, in one transaction, when its outcome is known.

- the answer is complete (``message.final``): the turn is written *before* that event goes on, so
  a store that fails turns the answer into a technical error rather than an answer nobody kept;
- the pipeline fails: the turn is written as ``error`` with its label (the question is kept);
- the client leaves mid-stream: the turn is written as ``idle`` with the partial answer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import DatafariError
from ..rag.pipeline import Event
from ..store import StoreUnavailable
from .store import ConversationLimit, ConversationStore, Turn

log = logging.getLogger(__name__)
SOURCE_FIELDS = ("id", "title", "url")  # a source as kept (with its number and whether it is cited): never its text


@dataclass
class TurnRecorder:
    store: ConversationStore
    username: str
    conversation_id: str
    question: str
    search_type: str = "rag"
    technical_label: str = "ragTechnicalError"
    started: float = field(default_factory=time.monotonic)

    def wrap(self, events: Iterator[Event]) -> Iterator[Event]:
        sources: list[dict[str, Any]] = []
        queries: list[str] = []
        partial: list[str] = []
        saved = False
        try:
            for event in events:
                if event.type == "sources.final":
                    sources = [
                        {**{k: item.get(k, "") for k in SOURCE_FIELDS}, "number": n, "cited": False}
                        for n, item in enumerate(event.data["items"], start=1)
                    ]
                elif event.type == "query.rewritten":
                    queries.append(event.data["query"])
                elif event.type == "message.delta":
                    partial.append(event.data["text"])
                elif event.type == "message.final":
                    cited = {r["number"] for r in event.data.get("references", [])}
                    sources = [{**s, "cited": s["number"] in cited} for s in sources]
                    turn = self._turn("done", event.data["text"], sources, queries, usage=event.data["usage"])
                    event = Event(event.type, {**event.data, "blockId": self._save(turn)})  # to rate it by
                    saved = True
                yield event
        except DatafariError as exc:
            if not saved:
                self._save_quietly(self._turn("error", "".join(partial), sources, queries, exc.label))
            raise
        except GeneratorExit:
            if not saved:
                self._save_quietly(self._turn("idle", "".join(partial), sources, queries))
            raise
        except Exception:
            if not saved:
                self._save_quietly(self._turn("error", "".join(partial), sources, queries, self.technical_label))
            raise

    def _turn(
        self,
        status: str,
        answer: str,
        sources: list[dict[str, Any]],
        queries: list[str],
        error_label: str | None = None,
        usage: dict[str, Any] | None = None,
    ) -> Turn:
        return Turn(
            question=self.question,
            answer=answer,
            status=status,
            search_type=self.search_type,
            rewritten_queries=list(queries),
            sources=sources,
            usage=dict(usage or {}),
            error_label=error_label,
            latency_ms=int((time.monotonic() - self.started) * 1000),
        )

    def _save(self, turn: Turn) -> str:
        try:
            return self.store.append(self.username, self.conversation_id, turn)
        except ConversationLimit as exc:
            raise DatafariError("conversationLimit", str(exc)) from exc
        except StoreUnavailable as exc:
            raise DatafariError(self.technical_label, "The conversation could not be saved.", detail=str(exc)) from exc

    def _save_quietly(self, turn: Turn) -> None:
        """Records a turn that failed or was left; the original outcome is what the client gets."""
        try:
            self.store.append(self.username, self.conversation_id, turn)
        except Exception as exc:  # the store's failure must not hide the turn's own
            log.warning("conversation %s: the %s turn could not be saved: %r", self.conversation_id, turn.status, exc)
