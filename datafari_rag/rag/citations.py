"""Citations: the sources are numbered in the prompts ([1], [2] …), the LLM cites them inline and
ends with a ``SOURCES_USED: 1, 3`` line (chat-core's convention). That line is taken out of the
answer — out of the token stream too, by holding back at most a short tail that could be its
start — and the answer's ``references`` are the sources it cites, each number checked against
the sources sent (a number that matches none is dropped).
"""

from __future__ import annotations

import re
from typing import Any

from .lexical import content_words, sentences

MARKER = "SOURCES_USED"
_MARKER_LINE = re.compile(r"(?:^|\n)[ \t]*SOURCES_USED", re.I)
_MARKER_NUMBERS = re.compile(r"^[ \t]*SOURCES_USED[ \t]*:?([^\n]*)", re.I | re.M)
_INLINE = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")
_MAX_HELD = 400  # a longer run of blank space is let through: it cannot be waiting for the marker


class SourcesUsedFilter:
    """Feeds the answer piece by piece; gives back what may be shown now. The concatenation of
    what it gives equals :func:`clean_answer` of the whole answer."""

    def __init__(self) -> None:
        self.held = ""
        self.started = False  # something was given: the held text no longer starts the answer
        self.dropping = False  # the marker was seen: the rest of the answer is its line

    def feed(self, piece: str) -> str:
        if self.dropping:
            return ""
        self.held += piece
        found = _MARKER_LINE.search(self.held) if self.started else _MARKER_LINE.search("\n" + self.held)
        if found:
            start = max(found.start() - (0 if self.started else 1), 0)
            self.dropping = True
            return self._give(self.held[:start].rstrip())
        keep = self._tail_start()
        if len(self.held) - keep > _MAX_HELD:
            keep = len(self.held)
        given, self.held = self.held[:keep], self.held[keep:]
        return self._give(given)

    def finish(self) -> str:
        if self.dropping:
            return ""
        rest, self.held = self.held.rstrip(), ""
        return self._give(rest)

    def _give(self, text: str) -> str:
        if not self.started:
            text = text.lstrip()
            self.started = bool(text)
        return text

    def _tail_start(self) -> int:
        """Where the part that must wait begins: trailing blank space, and a last line that may
        still become the marker (with the blank space before it)."""
        line = self.held.rfind("\n") + 1
        if line > 0 or not self.started:
            last = self.held[line:].lstrip(" \t").upper()
            if MARKER.startswith(last):
                return len(self.held[:line].rstrip())
        return len(self.held.rstrip())


def clean_answer(text: str) -> str:
    """The answer without its SOURCES_USED line (and what follows it), trimmed."""
    cleaner = SourcesUsedFilter()
    return cleaner.feed(text) + cleaner.finish()


def cited_numbers(text: str) -> list[int]:
    """The numbers an answer cites: inline ``[2]``, ``[1, 3]``, and its SOURCES_USED line, in order."""
    numbers: list[int] = []
    for group in _INLINE.findall(text):
        numbers += [int(n) for n in group.split(",")]
    for line in _MARKER_NUMBERS.findall(text):
        numbers += [int(n) for n in re.findall(r"\d{1,3}", line)]
    return list(dict.fromkeys(numbers))


def references(raw_answer: str, sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sources the answer cites, each with its number (1-based position in ``sources``)."""
    return [
        {"number": n, **{k: sources[n - 1][k] for k in ("id", "title", "url")}}
        for n in cited_numbers(raw_answer)
        if 1 <= n <= len(sources)
    ]


EXCERPT = 300  # characters of a citation's excerpt at most


def citations(
    raw_answer: str, sources: list[dict[str, Any]], passages: list[tuple[str, str, float]]
) -> list[dict[str, Any]]:
    """The references, each with ``excerpt`` — the sentence of that source's passages sent that
    shares the most words with the answer — and ``score``, its best passage's retrieval score.
    ``passages`` are (url, text, score) of everything sent."""
    wanted = content_words(clean_answer(raw_answer))
    out: list[dict[str, Any]] = []
    for ref in references(raw_answer, sources):
        mine = [(text, score) for url, text, score in passages if url == ref["url"]]
        candidates = [s for text, _ in mine for s in sentences(text)]
        best = max(candidates, key=lambda s: len(content_words(s) & wanted), default="")
        score = max((score for _, score in mine), default=0.0)
        out.append({**ref, "excerpt": best[:EXCERPT], "score": round(score, 6)})
    return out
