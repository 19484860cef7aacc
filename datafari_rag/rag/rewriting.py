"""Query rewriting: the *search* query rewritten by the LLM, from the conversation when there is
one and without it too, as Datafari 6.2 documents it (for BM25: keywords in English, no file
name, nothing inside [] or << >>, no +); the answer still uses the original question. The LLM
answers "0" to keep the query as it is.

With ``chat.query.rewriting.subQueries`` (chat-core's rewriting), a message in a conversation is
rewritten from the last 4 exchanges into a standalone question or several sub-queries, answered
as ``{"queries": [...]}``; greetings and closings skip it, and any failure keeps the message."""

from __future__ import annotations

import json
import re
from typing import Any

from ..llm import LlmError, LlmService, Usage
from ..prompts import PromptContext
from .hygiene import clean_query
from .query_params import QueryParams


def search_query(
    llm: LlmService, params: QueryParams, query: str, history: list[dict[str, str]], usage: Usage | None = None
) -> str:
    """The query rewritten when the retrieval mode's key is on (a conversation is not needed)."""
    if not params.rewrite:
        return query
    recent = params.hygiene.history(history, max(params.history_size, 1))
    template = "rewrite_bm25" if params.documents else "rewrite_vector"
    prompt = PromptContext(params.hygiene.query(query), history=recent).prompt(template)
    try:
        rewritten = clean_query(llm.generate(prompt.messages(), usage))
    except LlmError:
        return query  # rewriting is an optimisation: the original query still works
    return query if rewritten in ("", "0") else rewritten


SUB_QUERY_HISTORY = 8  # the last 4 exchanges
# Messages that need no search of their own: greetings, thanks, closings (English and French).
_SMALL_TALK = re.compile(
    r"^\s*(hi|hello|hey|good (morning|afternoon|evening)|bonjour|bonsoir|salut|coucou|thanks?( you)?( a lot)?"
    r"|many thanks|merci( beaucoup)?|bye|goodbye|see you|au revoir|à bientôt|ok(ay)?|great|perfect|parfait|super)"
    r"[\s!.,?]*$",
    re.I,
)
JSON_OBJECT = re.compile(r"\{.*\}", re.S)


def json_reply(reply: str | None) -> dict[str, Any] | None:
    """The JSON object of an LLM's reply (models often wrap it in prose or a code fence), or None."""
    found = JSON_OBJECT.search(reply or "")
    try:
        value = json.loads(found.group(0)) if found else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def is_small_talk(message: str) -> bool:
    return bool(_SMALL_TALK.match(message))


def search_queries(
    llm: LlmService, params: QueryParams, query: str, history: list[dict[str, str]], usage: Usage | None = None
) -> list[str]:
    """What to search for: sub-queries when they are on and the message is part of a conversation,
    else the one (possibly rewritten) search query."""
    if params.sub_queries > 0 and history and not is_small_talk(query):
        found = sub_queries(llm, params, query, history, usage)
        if found:
            return found
    return [search_query(llm, params, query, history, usage)]


def sub_queries(
    llm: LlmService, params: QueryParams, query: str, history: list[dict[str, str]], usage: Usage | None = None
) -> list[str] | None:
    """Up to ``chat.query.rewriting.subQueries`` standalone queries, or None (then the message is kept)."""
    recent = params.hygiene.history(history, SUB_QUERY_HISTORY)
    ctx = PromptContext(params.hygiene.query(query), history=recent)
    prompt = ctx.prompt("subqueries", max_queries=params.sub_queries)
    try:
        reply = llm.generate(prompt.messages(), usage)
    except LlmError:
        return None
    queries = (json_reply(reply) or {}).get("queries")
    if not isinstance(queries, list):
        return None
    cleaned = [clean_query(q) for q in queries if isinstance(q, str)]
    unique = list(dict.fromkeys(q for q in cleaned if q and q != "0"))
    return unique[: params.sub_queries] or None
