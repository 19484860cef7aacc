"""Context assembly: what of the retrieved passages reaches the LLM, and in which shape.

In order: the relevance floor (``context.minRelevanceScore``), parent-child enrichment
(``context.neighbours``: a chunk brings its neighbours), relevant-segment extraction
(``context.segment.maxChars``: the best contiguous span of a long passage), deduplication
(``context.dedup``: exact, then near-duplicates by cosine of word counts), a cap per source
(``context.maxChunksPerSource``) and, once cut into prompt chunks, a token budget
(``context.maxTokens``, counted with a real tokenizer). Each step is off by default: Datafari
sends what retrieval found.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
from tokenizers import Tokenizer

from ..config import ConfigError, Settings
from ..llm import LlmError, LlmService, Usage
from ..prompts import PromptContext
from ..retrieval import Snippet
from ..text.tokens import wordpiece
from .lexical import sentences, words

log = logging.getLogger(__name__)


def cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(count * b[word] for word, count in a.items() if word in b)
    norm = math.sqrt(sum(c * c for c in a.values())) * math.sqrt(sum(c * c for c in b.values()))
    return dot / norm if norm else 0.0


def above_floor(found: list[Snippet], floor: float) -> list[Snippet]:
    """The passages scored at least ``floor`` (the last stage's score: BM25's, the fusion's or the
    reranker's)."""
    return [x for x in found if x.score >= floor] if floor > 0 else found


def deduplicated(found: list[Snippet], threshold: float) -> list[Snippet]:
    """Without passages whose text repeats a better one's: the same words (exact, whitespace and
    case aside), or a cosine of word counts above ``threshold``."""
    kept: list[tuple[Snippet, Counter[str]]] = []
    exact: set[str] = set()
    for x in found:
        key = " ".join(words(x.content))
        counts = Counter(key.split())
        if key in exact or any(cosine(counts, other) > threshold for _, other in kept):
            continue
        exact.add(key)
        kept.append((x, counts))
    return [x for x, _ in kept]


def semantic_deduplicated(
    found: list[Snippet], threshold: float, embed: Callable[[list[str]], list[list[float]]]
) -> list[Snippet]:
    """Without passages that say what a better one says (MATIH's semantic deduplication): exact
    repeats, then a cosine of their embeddings above ``threshold`` — paraphrases too."""
    unique = deduplicated(found, 1.0)  # exact repeats only (a cosine is never above 1)
    if len(unique) < 2:
        return unique
    vectors = np.asarray(embed([x.content for x in unique]), dtype=np.float32)
    vectors /= np.where((norms := np.linalg.norm(vectors, axis=1, keepdims=True)) == 0, 1, norms)
    kept: list[int] = []
    for i in range(len(unique)):
        if not kept or float(np.max(vectors[kept] @ vectors[i])) <= threshold:
            kept.append(i)
    return [unique[i] for i in kept]


def capped_per_source(found: list[Snippet], cap: int) -> list[Snippet]:
    """At most ``cap`` passages of each source (document), the best ones."""
    if cap <= 0:
        return found
    seen: Counter[str] = Counter()
    out: list[Snippet] = []
    for x in found:
        seen[x.url] += 1
        if seen[x.url] <= cap:
            out.append(x)
    return out


def best_segment(text: str, query: str, max_chars: int) -> str:
    """The contiguous run of sentences, at most ``max_chars`` long, holding the most query words
    (each sentence counts the distinct query words it has); ties keep the earliest. A text that
    fits is kept whole."""
    if len(text) <= max_chars:
        return text
    wanted = set(words(query))
    parts = sentences(text)
    scores = [len(wanted & set(words(s))) for s in parts]
    best, best_span = -1, (0, 0)
    start, total, length = 0, 0, 0
    for end, sentence in enumerate(parts):
        total += scores[end]
        length += len(sentence) + 1
        while length > max_chars and start < end:
            total -= scores[start]
            length -= len(parts[start]) + 1
            start += 1
        if total > best:
            best, best_span = total, (start, end)
    segment = " ".join(parts[best_span[0] : best_span[1] + 1])
    return segment[:max_chars]


Extract = Callable[[str, str, int], "str | None"]  # (text, question, max characters) -> its segment


def segments(found: list[Snippet], query: str, max_chars: int, extract: Extract | None = None) -> list[Snippet]:
    """Each passage longer than ``max_chars`` cut to its relevant segment: ``extract``'s (the
    LLM's, RAG.NET's) when it gives one, else the lexical :func:`best_segment`."""
    if max_chars <= 0:
        return found
    out = []
    for x in found:
        chosen = extract(x.content, query, max_chars) if extract is not None and len(x.content) > max_chars else None
        out.append(replace(x, content=chosen or best_segment(x.content, query, max_chars)))
    return out


def llm_segment(llm: LlmService, usage: Usage | None, text: str, query: str, max_chars: int) -> str | None:
    """The LLM's relevant segment of ``text``: the part of the passage it copies, found in the
    passage (spacing aside) and not longer than ``max_chars``; None when it gives no such part
    (NONE, a paraphrase, a failure), so that the lexical segment is used."""
    prompt = PromptContext(query).prompt("segment", snippets=text, max_chars=max_chars)
    try:
        reply = " ".join(llm.generate(prompt.messages(), usage).split())
    except LlmError:
        return None
    if not reply or reply.upper() == "NONE" or len(reply) > max_chars:
        return None
    return reply if reply in " ".join(text.split()) else None


def within_budget(chunks: list[Snippet], max_tokens: int, count: Callable[[str], int]) -> list[Snippet]:
    """The leading chunks whose tokens add up to at most ``max_tokens`` (the first one always, cut
    by packing if it must be)."""
    if max_tokens <= 0:
        return chunks
    out: list[Snippet] = []
    used = 0
    for x in chunks:
        tokens = count(x.title) + count(x.content)
        if out and used + tokens > max_tokens:
            break
        out.append(x)
        used += tokens
    return out


@lru_cache(maxsize=4)
def token_counter(path: str) -> Callable[[str], int]:
    """Counts tokens with ``context.tokenizer`` (a Hugging Face ``tokenizer.json``: the LLM's own
    when it has one), else the packaged WordPiece tokenizer of all-MiniLM-L6-v2."""
    if path:
        try:
            tokenizer = Tokenizer.from_file(path)
        except Exception as exc:  # tokenizers raises its own exception type
            raise ConfigError(f"context.tokenizer: cannot read {path!r} as a tokenizer.json ({exc})") from exc
        tokenizer.no_truncation()
        tokenizer.no_padding()
    else:
        tokenizer = wordpiece()
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


@dataclass(frozen=True)
class AssemblyParams:
    """What context assembly reads of a configuration (``context.*``), built once per pipeline."""

    min_score: float  # context.minRelevanceScore
    neighbours: int  # context.neighbours
    segment_max_chars: int  # context.segment.maxChars (0: off)
    dedup: bool  # context.dedup
    dedup_threshold: float  # context.dedup.threshold
    dedup_method: str  # context.dedup.method: lexical | embedding
    segment_method: str  # context.segment.method: lexical | llm
    max_per_source: int  # context.maxChunksPerSource (0: no cap)
    max_tokens: int  # context.maxTokens (0: no budget)
    tokenizer: str  # context.tokenizer

    @classmethod
    def of(cls, settings: Settings) -> AssemblyParams:
        s = settings
        return cls(
            s.context_min_relevance_score,
            s.context_neighbours,
            s.context_segment_max_chars,
            s.context_dedup,
            s.context_dedup_threshold,
            s.context_dedup_method,
            s.context_segment_method,
            s.context_max_chunks_per_source,
            s.context_max_tokens,
            s.context_tokenizer,
        )


def assemble(
    found: list[Snippet],
    query: str,
    params: AssemblyParams,
    neighbours: Callable[[list[Snippet]], list[Snippet]],
    embed: Callable[[list[str]], list[list[float]]] | None = None,
    extract: Extract | None = None,
) -> list[Snippet]:
    """Every step before chunking (the token budget comes after it: see :func:`within_budget`);
    ``embed``: the embedding service, for ``context.dedup.method=embedding``."""
    p = params
    found = above_floor(found, p.min_score)
    if p.neighbours > 0:
        found = neighbours(found)
    found = segments(found, query, p.segment_max_chars, extract if p.segment_method == "llm" else None)
    if p.dedup and p.dedup_method == "embedding" and embed is not None:
        try:
            found = semantic_deduplicated(found, p.dedup_threshold, embed)
        except RuntimeError as exc:  # the embedding service failed: the word counts still work
            log.warning("semantic deduplication failed, lexical instead: %s", exc)
            found = deduplicated(found, p.dedup_threshold)
    elif p.dedup:
        found = deduplicated(found, p.dedup_threshold)
    return capped_per_source(found, p.max_per_source)
