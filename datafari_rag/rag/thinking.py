"""A reasoning model's thoughts (``<think>…</think>``, as DeepSeek-R1 and Qwen3 write them) kept
out of the answer: streamed as chat-core's ``think`` events, never in the message, the stored
history or the citations. A tag split across streamed pieces is held back until it is whole."""

from __future__ import annotations

import re

OPEN, CLOSE = "<think>", "</think>"
_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S | re.I)


def without_thinking(text: str) -> str:
    """``text`` without its thoughts (an unclosed ``<think>`` runs to the end)."""
    return _BLOCK.sub("", text)


class ThinkingSplitter:
    """Feeds the raw answer piece by piece; gives back ``(thought, answer)`` text as each is known."""

    def __init__(self) -> None:
        self.held = ""
        self.thinking = False

    def feed(self, piece: str) -> tuple[str, str]:
        self.held += piece
        thought, answer = "", ""
        while True:
            tag = CLOSE if self.thinking else OPEN
            at = self.held.lower().find(tag)
            if at < 0:
                break
            if self.thinking:
                thought += self.held[:at]
            else:
                answer += self.held[:at]
            self.held, self.thinking = self.held[at + len(tag) :], not self.thinking
        keep = _partial_tag(self.held, CLOSE if self.thinking else OPEN)
        given, self.held = self.held[: len(self.held) - keep], self.held[len(self.held) - keep :]
        if self.thinking:
            thought += given
        else:
            answer += given
        return thought, answer

    def finish(self) -> tuple[str, str]:
        rest, self.held = self.held, ""
        return (rest, "") if self.thinking else ("", rest)


def _partial_tag(text: str, tag: str) -> int:
    """How many trailing characters of ``text`` may be the start of ``tag``."""
    lower = text.lower()
    for size in range(min(len(tag) - 1, len(lower)), 0, -1):
        if tag.startswith(lower[-size:]):
            return size
    return 0
