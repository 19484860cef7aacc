"""Query enhancement before retrieval, each step one LLM call, off by default, and harmless when
the LLM fails or answers nonsense (the question is then searched as it is):

- multi-query expansion (``query.multiQuery.count``): other wordings of the question, each
  searched, the lists fused by reciprocal rank (and ``query.multiQuery.minVotes``);
- HyDE (``query.hyde.enabled``): a passage that would answer the question; kNN embeds it;
- self-querying (``query.selfQuery.fields``): the question turned into a query plus filters on
  whitelisted fields, with values the user's own documents hold. Filters become Solr ``terms``
  and range filters built by the product (:mod:`..retrieval.filters`), never raw ``fq``, and they
  only narrow: the ACL filter and the request's ``filters`` stay.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ..filters import DATE_FIELDS, NO_FILTER, SourceFilter
from ..llm import LlmError, LlmService, Usage
from ..prompts import PromptContext
from ..retrieval import RetrievalContext
from ..retrieval.facets import known_values
from .hygiene import clean_query
from .query_params import QueryParams
from .rewriting import json_reply

log = logging.getLogger(__name__)
MAX_FILTER_VALUES = 10


@dataclass(frozen=True)
class Enhanced:
    queries: list[str]
    dense: dict[str, str] = field(default_factory=dict)  # HyDE: query -> the passage kNN embeds
    restrict: SourceFilter = NO_FILTER  # self-querying's filters
    notes: dict[str, Any] = field(default_factory=dict)  # what was done, for the stream's phase event


def _ask(llm: LlmService, prompt: Any, usage: Usage | None) -> str | None:
    try:
        return llm.generate(prompt.messages(), usage)
    except LlmError as exc:
        log.warning("Query enhancement skipped: %s", exc)
        return None


def variants(llm: LlmService, count: int, question: str, usage: Usage | None = None) -> list[str]:
    """Up to ``count`` (``query.multiQuery.count``) other wordings (none when the LLM's answer is unusable)."""
    prompt = PromptContext(question).prompt("multi_query", count=count)
    reply = json_reply(_ask(llm, prompt, usage))
    queries = reply.get("queries") if reply else None
    if not isinstance(queries, list):
        return []
    cleaned = [clean_query(q) for q in queries if isinstance(q, str)]
    seen = {question.lower()}
    unique: list[str] = []
    for q in cleaned:
        if q and q.lower() not in seen:
            seen.add(q.lower())
            unique.append(q)
    return unique[:count]


def hypothetical_passage(llm: LlmService, question: str, usage: Usage | None = None) -> str | None:
    passage = clean_query(_ask(llm, PromptContext(question).prompt("hyde"), usage) or "")
    return passage or None


def self_query(
    llm: LlmService,
    allowed: tuple[str, ...],
    question: str,
    known: dict[str, list[str]],
    usage: Usage | None = None,
    today: date | None = None,
) -> tuple[str, SourceFilter] | None:
    """(query, filters) from the LLM's answer; a filter naming a field not allowed, or a value the
    user's documents do not hold, is dropped; None when nothing usable came back. ``allowed``:
    ``query.selfQuery.fields``."""
    dates = [f for f in allowed if f in DATE_FIELDS]
    shown = {f: known.get(f, []) for f in allowed if f not in DATE_FIELDS}
    when = (today or date.today()).isoformat()
    prompt = PromptContext(question).prompt("self_query", fields=shown, dates=dates, today=when)
    reply = json_reply(_ask(llm, prompt, usage))
    if reply is None:
        return None
    query = clean_query(reply["query"]) if isinstance(reply.get("query"), str) else ""
    values = _values(reply.get("filters"), shown)
    ranges = _ranges(reply.get("dates"), dates)
    if not values and not ranges:
        return None
    return query or question, SourceFilter(values, ranges)


def _values(raw: Any, shown: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    """Field -> values, each matched (case aside) to a value the documents hold."""
    out: dict[str, tuple[str, ...]] = {}
    for name, given in raw.items() if isinstance(raw, dict) else []:
        if name not in shown:
            continue
        items = given if isinstance(given, list) else [given]
        by_lower = {v.lower(): v for v in shown[name]}
        matched = [by_lower[v.strip().lower()] for v in items if isinstance(v, str) and v.strip().lower() in by_lower]
        if matched:
            out[name] = tuple(dict.fromkeys(matched))[:MAX_FILTER_VALUES]
    return out


def _ranges(raw: Any, dates: list[str]) -> dict[str, tuple[datetime | None, datetime | None]]:
    out: dict[str, tuple[datetime | None, datetime | None]] = {}
    for name, span in raw.items() if isinstance(raw, dict) else []:
        if name not in dates or not isinstance(span, dict):
            continue
        low, high = _day(span.get("from")), _day(span.get("to"), end=True)
        if (low or high) and not (low and high and low > high):
            out[name] = (low, high)
    return out


def _day(value: Any, end: bool = False) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        day = date.fromisoformat(value.strip()[:10])
    except ValueError:
        return None
    return datetime(day.year, day.month, day.day, 23, 59, 59) if end else datetime(day.year, day.month, day.day)


def enhance(
    llm: LlmService,
    params: QueryParams,
    retrieval: RetrievalContext,
    question: str,
    queries: list[str],
    usage: Usage | None = None,
) -> Enhanced:
    """The queries to search (the given ones, then the variants), HyDE's passage for the first,
    and self-querying's filters (its query replaces the first)."""
    s = params
    queries = list(queries)
    notes: dict[str, Any] = {}
    restrict = NO_FILTER
    if s.self_query_fields:
        known = known_values(retrieval.main, retrieval.access, list(s.self_query_fields), retrieval.restrict)
        found = self_query(llm, s.self_query_fields, question, known, usage)
        if found:
            queries[0], restrict = found
            notes["filters"] = {k: list(v) for k, v in restrict.values.items()}
            notes["filters"] |= {k: [_shown(a), _shown(b)] for k, (a, b) in restrict.ranges.items()}
    if s.multi_query:
        more = [q for q in variants(llm, s.multi_query, question, usage) if q not in queries]
        queries += more
        notes["variants"] = len(more)
    dense: dict[str, str] = {}
    if s.hyde and not s.documents:  # only kNN embeds the passage
        passage = hypothetical_passage(llm, question, usage)
        if passage:
            dense[queries[0]] = passage
        notes["hyde"] = bool(passage)
    return Enhanced(queries, dense, restrict, notes)


def _shown(moment: datetime | None) -> str | None:
    return moment.date().isoformat() if moment else None
