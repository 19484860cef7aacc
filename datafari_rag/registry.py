"""Every extension point's entries, named once: retrieval modes, generation strategies, query
enhancers, chunkers and rerankers.

The settings' choices, a workflow's checks, the OpenAPI enums, the CLI's choices and the web UI's
lists are read from here, and the store keeps the names as plain text (no CHECK constraint
copies a list). Each entry's implementation is found by its name where its feature lives
(``retrieval/dispatch.py``, ``rag/strategies.py``…); ``tests/test_registry.py`` runs every
registered entry through the consumers that must know it, so a name without an implementation
fails there, not in production.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    name: str
    summary: str  # one line for the settings' help, the OpenAPI document and the UI
    # retrieval modes: what the mode returns — chunks of VectorMain ("passages") or whole
    # documents of FileShare ("documents"), which decides the rewriting prompt, how deep the
    # reranker reads, and what an answer about one document searches
    returns: str = "passages"


@dataclass(frozen=True)
class Registry:
    point: str  # the setting it fills (a workflow's field of the same meaning)
    entries: tuple[Entry, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.entries)

    def __getitem__(self, name: str) -> Entry:
        for entry in self.entries:
            if entry.name == name:
                return entry
        raise KeyError(f"{self.point}: no entry {name!r} (one of {', '.join(self.names)})")

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def help(self) -> str:
        """The entries as one sentence: ``name: summary; …``."""
        return "; ".join(f"{e.name}: {e.summary}" for e in self.entries)


RETRIEVAL_MODES = Registry(
    "retrieval.method",
    (
        Entry("bm25", "keyword search (edismax) of FileShare's documents", returns="documents"),
        Entry("vector", "the nearest chunks of VectorMain (text-to-vector kNN)"),
        Entry("rrf", "BM25 and kNN over VectorMain's chunks, fused (hybrid)"),
        Entry("memory", "Datafari 6.2's in-memory vector search: the best BM25 documents chunked, embedded and ranked"),
    ),
)
STRATEGIES = Registry(
    "rag.strategy",
    (
        Entry("simple", "one answer"),
        Entry("cot", "reasoning steps first, returned apart as reasoning_steps"),
        Entry("reflect", "the draft checked against the sources, then corrected"),
        Entry("multihop", "the LLM may ask for more searches from what was found"),
        Entry("tot", "tree of thought: candidate answers scored by the faithfulness check, the best kept"),
    ),
)
QUERY_ENHANCERS = Registry(
    "query.enhancers",
    (
        Entry("rewrite", "the question rewritten for the search (with the conversation)"),
        Entry("multiQuery", "several phrasings searched, results fused"),
        Entry("hyde", "kNN searches a hypothetical answer instead of the question"),
        Entry("selfQuery", "filters on whitelisted fields read from the question"),
    ),
)
CHUNKERS = Registry(
    "vector.chunker",
    (
        Entry("recursive", "vector.splitter's cuts (in Solr's processor too)"),
        Entry("semantic", "a chunk ends where the next sentence's embedding drifts away"),
        Entry("proposition", "the LLM rewrites the text as self-contained statements, grouped"),
    ),
)
RERANKERS = Registry(
    "rerank.backend",
    (
        Entry("api", "a Cohere/Jina-compatible /rerank endpoint"),
        Entry("onnx", "a local cross-encoder (rerank.onnx.path)"),
        Entry("llm", "the configured LLM ranks the passages (listwise)"),
    ),
)
LLM_SERVICES = Registry(
    "ai.llm.service",
    (
        Entry("openai", "any OpenAI-compatible chat completions API (the local agent's too)"),
        Entry("datafari", "Datafari's name for the same: any OpenAI-compatible API"),
        Entry("anthropic", "Claude, through Anthropic's SDK (its Messages API)"),
        Entry("gemini", "Gemini, through Google's google-genai SDK"),
    ),
)
EXTENSION_POINTS = {
    "retrieval": RETRIEVAL_MODES,
    "strategy": STRATEGIES,
    "enhancers": QUERY_ENHANCERS,
    "chunker": CHUNKERS,
    "ranker": RERANKERS,
}  # by the name a workflow's JSON gives each


def returns_documents(mode: str) -> bool:
    """Whether retrieval mode ``mode`` returns whole documents (else chunks)."""
    return RETRIEVAL_MODES[mode].returns == "documents"
