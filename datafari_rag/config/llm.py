"""How the LLM client calls the LLM: timeouts, retries, deadlines, concurrency, fallbacks."""

from __future__ import annotations

from dataclasses import dataclass

from .keys import LLM, key


@dataclass(frozen=True)
class LlmSettings:
    """The LLM client (llm.timeout, llm.maxRetries…)."""

    llm_timeout: float = key(
        LLM,
        "llm.timeout",
        60.0,
        "Seconds one LLM attempt may wait for the connection or for the next bytes of the answer.",
        minimum=1,
    )
    llm_deadline: float = key(
        LLM,
        "llm.deadline",
        30.0,
        "Seconds an answer's LLM calls may take in all, counted from the answer's start: every "
        "call and attempt, and a streamed answer to its last token.",
        minimum=1,
    )
    llm_max_retries: int = key(LLM, "llm.maxRetries", 1, "Retries of a failed LLM call.")
    llm_fallback_models: str = key(
        LLM,
        "llm.fallbackModels",
        "",
        "Models tried in turn, on the same service, when a call to llm.model fails after its retries "
        "(comma-separated; empty: none). All share the answer's llm.deadline.",
    )
    llm_max_concurrent: int = key(
        LLM,
        "llm.maxConcurrent",
        64,
        "LLM calls that may run at once in one process (map-reduce maps, concurrent requests).",
        minimum=1,
    )
