"""Query rewriting: the *search* query rewritten by the LLM, from the conversation when there is
one and without it too, as Datafari 6.2 documents it (for BM25: keywords in English, no file
name, nothing inside [] or << >>, no +); the answer still uses the original question. The LLM
answers "0" to keep the query as it is."""

from __future__ import annotations

from ..config import Settings
from ..llm import LlmError, LlmService, Usage
from .hygiene import clean_history, clean_query
from .prompts import PromptContext


def rewriting_enabled(settings: Settings) -> bool:
    """On by the retrieval method's key; a conversation is not needed."""
    return settings.rewriting_bm25 if settings.retrieval == "bm25" else settings.rewriting_vector


def search_query(
    llm: LlmService, settings: Settings, query: str, history: list[dict[str, str]], usage: Usage | None = None
) -> str:
    if not rewriting_enabled(settings):
        return query
    accents = not settings.strip_accents
    recent = clean_history(history, max(settings.chat_history_size, 1), accents)
    template = "rewrite_bm25" if settings.retrieval == "bm25" else "rewrite_vector"
    prompt = PromptContext(clean_query(query, accents), history=recent).prompt(template)
    try:
        rewritten = clean_query(llm.generate(prompt.messages(), usage))
    except LlmError:
        return query  # rewriting is an optimisation: the original query still works
    return query if rewritten in ("", "0") else rewritten
