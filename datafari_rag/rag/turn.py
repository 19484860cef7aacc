"""One answer on its way through the pipeline's steps: what was asked, by whom, and what each step
found for the next. A step reads what the steps before it wrote and writes its own part; the
pipeline (:mod:`.pipeline`) only runs the steps in order."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..filters import NO_FILTER, SourceFilter
from ..llm import Usage
from ..prompts import PromptContext
from ..retrieval import RetrievalContext, Snippet
from ..security import UserAccess
from .history import EVERY_MESSAGE, HistoryFilter
from .packing import Item
from .strategies import FinalCall


@dataclass(frozen=True)
class RagRequest:
    query: str  # what is searched (and asked, unless ``question`` is given)
    doc_id: str | None = None
    lang: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)  # rag/history.py filters it
    format: str | None = None
    filters: SourceFilter = NO_FILTER  # Datafari 7.0: sources only among these documents
    question: str | None = None  # Datafari 6.1's ``prompt``: what the LLM answers, when not the query
    mode: str = "rag"  # rag | gpt (no retrieval: the conversation only) | agentic (the LLM calls tools)
    top_k: int | None = None  # chat-core's top_k: documents (and passages) kept, instead of the settings'
    temperature: float | None = None  # chat-core's temperature: this answer's, instead of llm.temperature
    whole_documents: bool = False  # chat-core's use_paragraph=false: each retrieved text whole
    instructions: str = ""  # the conversation's own (chat-core's per-room system prompt)
    prompts: Mapping[str, str] = field(default_factory=dict)  # the conversation's own prompt templates
    history_filter: HistoryFilter = EVERY_MESSAGE  # chat-core's: narrows chat.history.blockClasses


@dataclass(frozen=True)
class Event:
    type: str
    data: dict[str, Any]


Wrap = Callable[[Iterator[Event]], Generator[Event, None, None]]  # closed when the client leaves


@dataclass
class Turn:
    """One answer's state. Set when it starts: the request (its history filtered), who asks, the
    prompt's context and the retrieval's. Then each step's part, in the order they run."""

    request: RagRequest
    access: UserAccess
    ctx: PromptContext
    retrieval: RetrievalContext
    usage: Usage
    stream: bool
    started: float  # time.monotonic() at the start, for latency_ms
    question: str = ""  # what the LLM answers (Datafari 6.1's prompt, else the query)
    queries: list[str] = field(default_factory=list)  # rewrite: what is searched
    found: list[Snippet] = field(default_factory=list)  # retrieve: the passages found
    steps: list[str] = field(default_factory=list)  # reasoning_steps: multihop's searches, checks, cot's steps
    snippets: list[Snippet] = field(default_factory=list)  # assemble: what the LLM is sent
    sent: list[dict[str, Any]] = field(default_factory=list)  # assemble: the sources, one per url
    items: list[Item] = field(default_factory=list)  # assemble: the snippets as the prompt shows them
    final: FinalCall | None = None  # pack: the last call (refine's or map-reduce's)
    raw: str = ""  # generate: the answer as the LLM wrote it
    faithfulness: float | None = None  # generate: the faithfulness check's verdict (reflect, tot)
    done: bool = False  # a step answered (the FAQ) or the answer is cited: no step follows
    timings: dict[str, float] = field(default_factory=dict)  # step -> seconds (Server-Timing, /metrics)
