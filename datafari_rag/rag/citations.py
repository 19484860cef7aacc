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
from .thinking import without_thinking

MARKER = "SOURCES_USED"
_MARKER = re.compile(MARKER, re.I)
_WORD = re.compile(r"\w")
# an inline marker's list: "SOURCES_USED: 1, 3", "SOURCES_USED 2 and 4", "SOURCES_USED: none"
_INLINE_LIST = re.compile(
    r"SOURCES_USED[ \t]*:?(?:[ \t]*(?:none\b|\[?\d{1,3}\]?(?:[ \t]*(?:,|and|&)[ \t]*\[?\d{1,3}\]?)*))?", re.I
)
# what an inline list cut short by the end of a piece may still go on with
_LIST_GOES_ON = re.compile(r"[ \t]*(?:(?:,|&|a|an|and)[ \t]*\[?|:[ \t]*|\[|n|no|non)?", re.I)
_MARKER_NUMBERS = re.compile(r"^[ \t]*SOURCES_USED[ \t]*:?([^\n]*)", re.I | re.M)
_INLINE = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")
_MAX_HELD = 400  # a longer run of blank space is let through: it cannot be waiting for the marker


class SourcesUsedFilter:
    """Feeds the answer piece by piece; gives back what may be shown now. The concatenation of
    what it gives equals :func:`clean_answer` of the whole answer.

    The marker opening a line closes the answer: that line and what follows are dropped. Written
    inline ("… [1]. SOURCES_USED: 1, 3"), the marker and its list are cut out and the text goes on.
    """

    def __init__(self) -> None:
        self.held = ""
        self.started = False  # something was given: the held text no longer starts the answer
        self.dropping = False  # the marker opened a line: the rest of the answer is its line
        self.last = ""  # the last character given: a marker right after a word's letter is not one

    def feed(self, piece: str) -> str:
        if self.dropping:
            return ""
        self.held += piece
        return self._give(self._scan(final=False))

    def finish(self) -> str:
        if self.dropping:
            return ""
        given = self._scan(final=True)
        rest, self.held = self.held.rstrip(), ""
        return self._give(given + rest) if not self.dropping else self._give(given)

    def _scan(self, final: bool) -> str:
        """Cuts the markers out of ``held``; returns what may be given now, keeps the rest."""
        out = ""
        while not self.dropping:
            found = next((m for m in _MARKER.finditer(self.held) if not self._in_word(m.start(), out)), None)
            if found is None:
                break
            before = self.held[: found.start()]
            line = before.rfind("\n") + 1
            if not before[line:].strip() and (line > 0 or not (self.started or out.strip())):
                self.dropping = True  # it opens a line: the answer ends before it
                out += before[:line].rstrip()
                self.held = ""
                return out
            listed = _INLINE_LIST.match(self.held, found.start())
            assert listed is not None  # the marker alone matches
            if not final and _LIST_GOES_ON.fullmatch(self.held, listed.end()):
                out += before.rstrip(" \t")  # its list may go on in the next piece
                self.held = self.held[len(before.rstrip(" \t")) :]
                return out
            out += before.rstrip(" \t")
            self.held = self.held[listed.end() :]
        if self.dropping or final:
            return out
        keep = self._tail_start()
        if len(self.held) - keep > _MAX_HELD:
            keep = len(self.held)
        out, self.held = out + self.held[:keep], self.held[keep:]
        return out

    def _in_word(self, at: int, out: str) -> bool:
        """Whether ``held[at]`` follows a word character (``out``, then what was given, before it)."""
        before = self.held[at - 1] if at else (out or self.last)[-1:]
        return bool(_WORD.match(before))

    def _give(self, text: str) -> str:
        if not self.started:
            text = text.lstrip()
            self.started = bool(text)
        self.last = (self.last + text)[-1:]
        return text

    def _tail_start(self) -> int:
        """Where the part that must wait begins: trailing blank space, and an end that may still
        become the marker (with the blank space before it)."""
        upper = self.held.upper()
        for size in range(min(len(MARKER) - 1, len(upper)), 0, -1):
            if MARKER.startswith(upper[-size:]) and not self._in_word(len(upper) - size, ""):
                return len(self.held[:-size].rstrip())
        return len(self.held.rstrip())


def clean_answer(text: str) -> str:
    """The answer without its thoughts (``<think>…</think>``) and SOURCES_USED markers, trimmed."""
    cleaner = SourcesUsedFilter()
    return cleaner.feed(without_thinking(text)) + cleaner.finish()


def cited_numbers(text: str) -> list[int]:
    """The numbers an answer cites: inline ``[2]``, ``[1, 3]``, and its SOURCES_USED line, in order."""
    numbers: list[int] = []
    text = without_thinking(text)  # a number the model only thought of is not cited
    for group in _INLINE.findall(text):
        numbers += [int(n) for n in group.split(",")]
    for line in _MARKER_NUMBERS.findall(text):
        numbers += [int(n) for n in re.findall(r"\d{1,3}", line)]
    for listed in _INLINE_LIST.finditer(text):  # written inline, the list ends where the text goes on
        numbers += [int(n) for n in re.findall(r"\d{1,3}", listed.group())]
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
