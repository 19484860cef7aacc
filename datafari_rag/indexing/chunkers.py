"""The chunkers a workflow (or ``vector.chunker``) may pick, and the LLM evaluator of chunks.

- ``recursive`` (the default): :mod:`.chunker`, Datafari's splitters;
- ``semantic``: the text cut into sentences, each embedded with the configured model; a chunk
  ends where the next sentence drifts away (its cosine distance to the previous one is above the
  ``vector.semantic.percentile``-th percentile of the document's distances) or where it would
  exceed ``vector.chunksize`` characters;
- ``proposition``: the LLM rewrites each part of the text as short, self-contained statements;
  consecutive statements are grouped up to ``vector.chunksize`` characters.

The evaluator (``vector.chunker.evaluator``) asks the LLM to score each chunk from 0 to 1 (is it
self-contained, meaningful, on one topic?) and drops those below
``vector.chunker.evaluator.threshold``; a reply without a score keeps the chunk (an LLM that
fails never costs a document its text).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from langchain_text_splitters import RecursiveCharacterTextSplitter

from ..config.indexing import IndexingSettings
from ..llm import LlmError, LlmService
from ..prompts import PromptContext
from ..rag.rewriting import json_reply
from .chunker import SEPARATORS, chunk_text, keep

log = logging.getLogger(__name__)

Embed = Callable[[list[str]], list[list[float]]]
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n{2,}")
PROPOSITION_INPUT = 2000  # characters of text the LLM rewrites at a time
MAX_PROPOSITIONS = 100  # statements kept from one reply


@dataclass(frozen=True)
class ChunkingReport:
    """What one document's chunking did (for a job's progress and the logs)."""

    chunks: list[str]
    rejected: int = 0  # chunks the evaluator dropped


def custom(settings: IndexingSettings) -> bool:
    """Whether the sidecar must cut the text itself (Solr's processor cuts recursively only)."""
    return settings.vector_chunker != "recursive" or settings.vector_chunker_evaluator


def _pieces(text: str, size: int) -> list[str]:
    """Text cut at sentence and word boundaries into pieces of at most ``size`` characters."""
    splitter = RecursiveCharacterTextSplitter(
        separators=SEPARATORS["recursiveSplitter"], keep_separator="end", chunk_size=size, chunk_overlap=0
    )
    return [p.strip() for p in splitter.split_text(text) if p.strip()]


def sentences(text: str, size: int) -> list[str]:
    """The text's sentences (and paragraphs), each at most ``size`` characters."""
    out: list[str] = []
    for part in _SENTENCE.split(text):
        part = " ".join(part.split())
        if part:
            out += [part] if len(part) <= size else _pieces(part, size)
    return out


def _grouped(parts: list[str], size: int, breaks: set[int] | None = None) -> list[str]:
    """Consecutive parts joined by a space up to ``size`` characters, and cut before each index of
    ``breaks``."""
    chunks: list[str] = []
    current = ""
    for i, part in enumerate(parts):
        if current and (i in (breaks or ()) or len(current) + 1 + len(part) > size):
            chunks.append(current)
            current = ""
        current = f"{current} {part}" if current else part
    if current:
        chunks.append(current)
    return chunks


def semantic_chunks(text: str, size: int, percentile: float, embed: Embed) -> list[str]:
    parts = sentences(text, size)
    if len(parts) < 3:
        return _grouped(parts, size)
    vectors = np.asarray(embed(parts), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True).clip(min=1e-12)
    distances = 1.0 - np.sum(vectors[:-1] * vectors[1:], axis=1)
    threshold = float(np.percentile(distances, percentile))
    breaks = {i + 1 for i, d in enumerate(distances) if d > threshold}
    return _grouped(parts, size, breaks)


def _json_answer(template: str, text: str, llm: LlmService, failed: str) -> dict[str, Any] | None:
    """The JSON object the LLM answers ``template`` with for ``text``; None (``failed`` logged)
    when the call fails or the reply holds none."""
    try:
        return json_reply(llm.generate(PromptContext(text).prompt(template).messages()))
    except LlmError as exc:
        log.warning("%s (%s)", failed, exc)
        return None


def propositions(text: str, llm: LlmService) -> list[str] | None:
    """The LLM's statements for one part of a text, or None when it gave none usable."""
    found = _json_answer("propositions", text, llm, "propositions not written: the text is kept as it is")
    values = found.get("propositions") if found else None
    if not isinstance(values, list):
        return None
    kept = [" ".join(v.split()) for v in values[:MAX_PROPOSITIONS] if isinstance(v, str) and v.strip()]
    return kept or None


def proposition_chunks(text: str, size: int, llm: LlmService) -> list[str]:
    statements: list[str] = []
    for part in _pieces(text, PROPOSITION_INPUT):
        statements += propositions(part, llm) or sentences(part, size)
    fitted = [piece for s in statements for piece in ([s] if len(s) <= size else _pieces(s, size))]
    return _grouped(fitted, size)


def chunk_score(chunk: str, llm: LlmService) -> float | None:
    """The LLM's score of a chunk (0 to 1), or None when it gave none."""
    found = _json_answer("chunk_evaluation", chunk, llm, "chunk not evaluated: kept")
    score = found.get("score") if found else None
    if isinstance(score, int | float) and not isinstance(score, bool) and 0 <= score <= 1:
        return float(score)
    return None


def _recursive(text: str, settings: IndexingSettings, embed: Embed | None, llm: LlmService | None) -> list[str]:
    return chunk_text(text, settings)


def _semantic(text: str, settings: IndexingSettings, embed: Embed | None, llm: LlmService | None) -> list[str]:
    if embed is None:  # nothing to embed the sentences with: the recursive cuts
        return chunk_text(text, settings)
    return semantic_chunks(text, settings.vector_chunk_size, settings.vector_semantic_percentile, embed)


def _proposition(text: str, settings: IndexingSettings, embed: Embed | None, llm: LlmService | None) -> list[str]:
    if llm is None:  # no LLM to write the propositions: the recursive cuts
        return chunk_text(text, settings)
    return proposition_chunks(text, settings.vector_chunk_size, llm)


# each chunker of the registry (registry.CHUNKERS), by its name
CHUNKERS: dict[str, Callable[[str, IndexingSettings, Embed | None, LlmService | None], list[str]]] = {
    "recursive": _recursive,
    "semantic": _semantic,
    "proposition": _proposition,
}


def chunk_document(
    text: str, settings: IndexingSettings, embed: Embed | None, llm: LlmService | None
) -> ChunkingReport:
    """The chunks of one document's text by the configured chunker, after the evaluator."""
    chunks = [c for c in CHUNKERS[settings.vector_chunker](text, settings, embed, llm) if keep(c, settings)]
    if not settings.vector_chunker_evaluator or llm is None:
        return ChunkingReport(chunks)
    kept = []
    for chunk in chunks:
        score = chunk_score(chunk, llm)
        if score is None or score >= settings.vector_chunker_evaluator_threshold:
            kept.append(chunk)
    return ChunkingReport(kept, len(chunks) - len(kept))
