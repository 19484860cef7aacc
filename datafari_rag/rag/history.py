"""Which past messages reach a prompt (chat-core's history filtering and tool-message pruning).

A client's history may hold more than chat turns: messages tagged with a ``block_class`` (a chat
UI's kind of block: ``text``, ``think``, ``sources``, ``faq``…) and ``metadata``, an agent's
tool calls (an ``assistant`` message with ``tool_calls``) and their results (``tool`` messages).
Before the history is cleaned and cut to ``chat.memory.history.size``:

- only the block classes of ``chat.history.blockClasses`` are kept (empty: every class; a message
  without a class is ``text``), narrowed by the request's ``history_filter.block_classes``;
- a request's ``history_filter.metadata`` keeps the messages whose metadata has, for each key, one
  of the values given;
- tool messages are pruned: calls without text go, and only the last ``chat.history.toolResults``
  results stay (0 by default), each as an assistant turn naming its tool — a result is what the
  assistant learnt, not something the user said.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

TEXT = "text"  # the class of a message that names none
TOOL_RESULT_MAX_CHARS = 2000


@dataclass(frozen=True)
class HistoryFilter:
    block_classes: frozenset[str] | None = None  # None: every class
    metadata: Mapping[str, frozenset[str]] = field(default_factory=dict)  # key: values accepted

    def narrowed(self, other: HistoryFilter) -> HistoryFilter:
        """Both filters at once: what a request asks can only remove messages."""
        if self.block_classes is None or other.block_classes is None:
            classes = self.block_classes if other.block_classes is None else other.block_classes
        else:
            classes = self.block_classes & other.block_classes
        metadata = dict(self.metadata)
        for key, values in other.metadata.items():
            metadata[key] = metadata[key] & values if key in metadata else values
        return HistoryFilter(classes, metadata)

    def keeps(self, message: Mapping[str, Any]) -> bool:
        if self.block_classes is not None and message.get("block_class", TEXT) not in self.block_classes:
            return False
        tags = message.get("metadata") or {}
        return all(key in tags and str(tags[key]) in values for key, values in self.metadata.items())


EVERY_MESSAGE = HistoryFilter()


def classes_of(text: str) -> frozenset[str] | None:
    """``chat.history.blockClasses`` as a set (None when empty: every class)."""
    names = frozenset(c.strip() for c in text.split(",") if c.strip())
    return names or None


def prompt_history(messages: list[dict[str, Any]], keep: HistoryFilter, tool_results: int) -> list[dict[str, str]]:
    """The chat turns of ``messages`` a prompt may show, oldest first, as ``{role, content}``."""
    results = [i for i, m in enumerate(messages) if m["role"] == "tool"]
    kept_results = set(results[len(results) - tool_results :]) if tool_results > 0 else set()
    turns = []
    for i, message in enumerate(messages):
        if not keep.keeps(message):
            continue
        if message["role"] == "tool":
            if i in kept_results:
                name = message.get("name") or "tool"
                text = message["content"][:TOOL_RESULT_MAX_CHARS]
                turns.append({"role": "assistant", "content": f"Result of {name}: {text}"})
            continue
        if message.get("tool_calls") and not message["content"].strip():
            continue  # a call alone: its result (if kept) says what it found
        turns.append({"role": message["role"], "content": message["content"]})
    return turns
