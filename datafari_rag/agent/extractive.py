"""The local generator: an honest extractive answerer for ``/v1/chat/completions``.

It reads the prompts the pipeline writes (``prompts/``): the task line (system message), the question, the
``<document title=…>`` blocks and ``<answer>`` blocks. It answers with the sentences of the
documents most similar to the question (by embedding), each followed by its source's number
(``[1]``, as the prompt numbers the documents) or, for an unnumbered document, its title,
and answers with the prompt's own abstention sentence (``reply exactly: …``, in the answer's
language; "I could not find the answer in the documents." by default) when no sentence is both
similar enough and tied to the question: a sentence is cited only if it holds enough of the
question's own words (its support), so that an unrelated passage is never quoted with
confidence — the English embedding model finds any two French texts somewhat alike.
Both thresholds were calibrated on SQuAD 2.0 and PIAF (bench/calibrate_extractive.py). Rewriting
prompts get "0" (keep the query); summarising prompts get the document's most central sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import numpy as np

from ..words import content_words, support
from .model import SentenceEmbedder

__all__ = ["ExtractiveGenerator", "content_words", "support"]

NOT_FOUND = "I could not find the answer in the documents."
# Calibrated on 400 SQuAD 2.0 questions (bench/calibrate_extractive.py): the cosine that best
# separates a question's own paragraph from another article's (balanced accuracy 0.986;
# medians 0.67 relevant, 0.09 irrelevant).
DEFAULT_THRESHOLD = 0.37
# The share of the question's words (stop words aside, accents folded, compared on their first
# five letters) a cited sentence must hold. Measured on 300 questions per set
# (bench/calibrate_extractive.py --support, docs/evaluation.md): with 0.2, a French question over
# an unrelated paragraph is abstained on 96 % of the time (24 % with the cosine alone), while
# 90 % of PIAF's and 97 % of SQuAD's answerable questions are still answered.
DEFAULT_SUPPORT = 0.2
_DOCUMENT = re.compile(r'<document(?: number="(\d+)")? title="(.*?)">\n(.*?)\n</document>', re.S)
_ANSWER = re.compile(r"<answer>\n?(.*?)\n?</answer>", re.S)
_QUESTION = re.compile(r"^Question: (.*)$", re.M)
_TASK = re.compile(r"^Task: (\w+)", re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_CITATION = re.compile(r"\s*\[[^\[\]]*\]$")
_ABSTENTION = re.compile(r"reply exactly: (.+?)$", re.M)


@dataclass
class ParsedPrompt:
    task: str
    question: str
    documents: list[tuple[str, str]] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    abstention: str = NOT_FOUND  # what to answer when nothing in the documents answers


def parse_prompt(text: str) -> ParsedPrompt:
    task = _TASK.search(text)
    questions = _QUESTION.findall(text)
    # a numbered document is cited by its number ([1]), as the prompt asks; else by its title
    documents = [(number or title, content) for number, title, content in _DOCUMENT.findall(text)]
    if not task and not documents:  # a prompt not written by the pipeline: all of it is context
        lines = [line for line in text.strip().splitlines() if line.strip()]
        question = lines[-1] if lines else ""
        return ParsedPrompt("answer", question, [("", "\n".join(lines[:-1]))])
    abstention = _ABSTENTION.search(text)
    return ParsedPrompt(
        task=task.group(1) if task else "answer",
        question=questions[-1].strip() if questions else "",
        documents=documents,
        answers=[a.strip() for a in _ANSWER.findall(text)],
        abstention=abstention.group(1).strip() if abstention else NOT_FOUND,
    )


def prompt_text(messages: list[dict[str, str]]) -> str:
    """What the generator reads of a chat: the instructions (system messages) and the last user
    message (documents and question). Earlier turns are conversation, not material to quote: when
    the conversation is all there is, the pipeline sends it as a document."""
    system = [m["content"] for m in messages if m["role"] in ("system", "developer")]
    users = [m["content"] for m in messages if m["role"] == "user"]
    return "\n".join([*system, users[-1] if users else messages[-1]["content"]])


def previous_question(messages: list[dict[str, str]]) -> str:
    """The user's message of the turn before (the last one answered), which a follow-up such as
    "And the managers?" refers to; empty when the chat has no earlier turn."""
    answered = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    earlier = [m["content"] for m in messages[:answered] if m["role"] == "user"]
    return earlier[-1].strip() if earlier else ""


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if len(s.strip()) > 2]


class ExtractiveGenerator:
    def __init__(
        self, embedder: SentenceEmbedder, threshold: float = DEFAULT_THRESHOLD, min_support: float = DEFAULT_SUPPORT
    ) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self.min_support = min_support

    def complete(self, messages: list[dict[str, str]], max_tokens: int = 200) -> str:
        parsed = parse_prompt(prompt_text(messages))
        if parsed.task in ("rewrite", "subqueries"):  # keep the query: the extractive agent rewrites nothing
            return "0"
        if parsed.task == "summarize":
            return self._summary(parsed, max_tokens)
        answer = self._answer(parsed, max_tokens)
        before, own = previous_question(messages), content_words(parsed.question)
        if answer == parsed.abstention and before and own:
            # A follow-up names its subject in the turn before: asked again with it, a quoted
            # sentence must still hold one of the follow-up's own words ("managers").
            followed = replace(parsed, question=f"{before} {parsed.question}")
            answer = self._answer(followed, max_tokens, own=own)
        return answer

    def _answer(self, parsed: ParsedPrompt, max_tokens: int, own: list[str] | None = None) -> str:
        candidates: list[tuple[str, str]] = []  # (sentence, source title)
        for title, text in parsed.documents:
            candidates += [(s, title) for s in sentences(text)]
        nothing = {NOT_FOUND, parsed.abstention}
        for answer in parsed.answers:  # an earlier or partial answer: its lines keep their citations
            if answer.strip() not in nothing:
                candidates += [(line, "") for line in answer.splitlines() if line.strip() and line not in nothing]
        if not candidates or not parsed.question:
            return parsed.abstention
        plain = [_CITATION.sub("", s) for s, _ in candidates]
        vectors = self.embedder.embed([parsed.question, *plain])
        scores = vectors[1:] @ vectors[0]
        asked = content_words(parsed.question)
        order = [
            i
            for i in np.argsort(-scores)
            if scores[i] >= self.threshold
            and support(asked, plain[i]) >= self.min_support
            and (own is None or support(own, plain[i]) > 0)
        ]
        if not order:
            return parsed.abstention
        best = float(scores[order[0]])
        picked: list[str] = []
        seen: set[str] = set()
        for i in order:
            if scores[i] < best - 0.15 or len(picked) == 3:
                break
            sentence, title = candidates[i]
            if plain[i] in seen:
                continue
            seen.add(plain[i])
            line = f"{sentence} [{title}]" if title else sentence
            if picked and self.embedder.count_tokens("\n".join([*picked, line])) > max_tokens:
                break
            picked.append(line)
        return "\n".join(picked)

    def _summary(self, parsed: ParsedPrompt, max_tokens: int) -> str:
        text = "\n".join(t for _, t in parsed.documents) + "\n" + "\n".join(parsed.answers)
        found = sentences(text)
        if not found:
            return ""
        vectors = self.embedder.embed(found)
        centre = vectors.mean(axis=0)
        ranked = sorted(np.argsort(-(vectors @ centre))[:3])  # most central, in reading order
        picked: list[str] = []
        for i in ranked:
            if picked and self.embedder.count_tokens(" ".join([*picked, found[i]])) > max_tokens:
                break
            picked.append(found[i])
        return " ".join(picked)
