"""The steps of an answer, in the order the pipeline runs them:

guard → faq → rewrite → retrieve → assemble → pack → generate → cite

Each is a small object built once per pipeline with only what it needs (its parameters, the LLM,
the reranker…), and runs on one :class:`.turn.Turn`: it reads what the steps before it wrote, writes
its own part, and yields the events a client sees (phases, ``sources.final``, the answer's pieces,
``message.final``). A step that answers (the FAQ, cite) marks the turn done. The other modes
(``gpt``, ``agentic``) are steps of their own that answer."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, ClassVar, Protocol

from ..errors import DatafariError
from ..llm import LlmService
from ..prompts import snippet_text
from ..retrieval import Snippet, retrieve_all, retrieve_document
from ..retrieval.neighbours import with_neighbours
from ..retrieval.rerank import Reranker
from ..solr import SolrError
from .agentic import AgentLimits, AgentRun
from .answer_strategies import AnswerStrategy
from .assembly import AssemblyParams, assemble, llm_segment, token_counter, within_budget
from .chunking import PromptChunking
from .citations import MARKER, clean_answer
from .confidence import AnswerRelevance
from .faq import Faq, FaqHit
from .finish import Evidence, finished, sources
from .generation import final_answer, ignore, with_progress
from .hygiene import Hygiene
from .mcp_tools import ExternalTools
from .packing import Item
from .query_enhancement import enhance
from .query_params import QueryParams
from .rewriting import search_queries
from .strategies import FinalCall, mapreduce, refine
from .topic_guard import TopicGuard
from .turn import Event, Turn

log = logging.getLogger(__name__)
CONVERSATION = "This conversation"  # the title the conversation has when it is the only context


class Step(Protocol):
    name: ClassVar[str]  # its label in /metrics and Server-Timing

    def run(self, turn: Turn) -> Iterator[Event]: ...


@dataclass(frozen=True)
class Guard:
    """``forbidden.enabled``: before anything runs, no rewriting, no search, no answer."""

    guard: TopicGuard
    name: ClassVar[str] = "guard"

    def run(self, turn: Turn) -> Iterator[Event]:
        yield Event("phase", {"name": "rag:guard"})
        request = turn.request
        self.guard.check(request.question or request.query, turn.access.username, turn.usage)


@dataclass(frozen=True)
class FaqAnswer:
    """``faq.enabled``: a curated entry close enough to the question answers it, with the entry as
    its one source: no retrieval, no LLM. An FAQ that cannot be read answers nothing."""

    faq: Faq
    name: ClassVar[str] = "faq"

    def run(self, turn: Turn) -> Iterator[Event]:
        if turn.request.doc_id is not None:
            return
        try:
            hit = self.faq.answer(turn.question, turn.access)
        except (SolrError, RuntimeError) as exc:  # the embedding service's EmbeddingError is one
            log.warning("FAQ not read, the question goes the usual way: %s", exc)
            return
        if hit is None:
            return
        yield from self._answer(turn, hit)
        turn.done = True

    @staticmethod
    def _answer(turn: Turn, hit: FaqHit) -> Iterator[Event]:
        yield Event("phase", {"name": "rag:faq", "question": hit.question, "score": round(hit.score, 4)})
        sent = [{"id": hit.id, "title": hit.question, "url": hit.url, "content": hit.answer}]
        yield Event("sources.final", {"items": sent})
        if turn.stream:
            yield Event("message.delta", {"text": hit.answer})
        raw = f"{hit.answer}\n{MARKER}: 1"  # the entry is what the answer uses
        steps = [f"faq: {hit.question} ({hit.score:.2f})"]
        evidence = Evidence([(hit.url, hit.answer, hit.score)], turn.ctx.abstention, steps)
        yield finished(raw, sent, turn.usage, turn.started, turn.request.lang, evidence)


@dataclass(frozen=True)
class Rewrite:
    """What is searched: the query, rewritten with the conversation (and cut in sub-queries)
    when ``chat.query.rewriting`` says so."""

    llm: LlmService
    params: QueryParams
    name: ClassVar[str] = "rewrite"

    def run(self, turn: Turn) -> Iterator[Event]:
        q, request = self.params, turn.request
        if q.rewrite or (q.sub_queries and request.history):
            yield Event("phase", {"name": "rag:query rewriting"})
        turn.queries = search_queries(self.llm, q, request.query, request.history, turn.usage)
        for rewritten in (q for q in turn.queries if q != request.query):  # for the store; streams do not show it
            yield Event("query.rewritten", {"query": rewritten})


@dataclass(frozen=True)
class Retrieve:
    """The passages: one document by id, or query enhancement, retrieval (with the cache and the
    reranker), and the strategy's further searches (multihop)."""

    llm: LlmService
    params: QueryParams
    strategy: AnswerStrategy
    reranker: Reranker | None
    rerank_backend: str
    name: ClassVar[str] = "retrieve"

    def run(self, turn: Turn) -> Iterator[Event]:
        request = turn.request
        if request.doc_id is not None:
            yield Event("phase", {"name": "rag:retrieval"})
            found = retrieve_document(turn.retrieval, request.doc_id, turn.queries[0])
            if found is None:
                reason = f"No readable document with id {request.doc_id!r}."
                raise DatafariError("ragFileNotFound", reason, lang=request.lang)
            turn.found = found
            return
        yield from self._search(turn)
        retrieval = turn.retrieval

        def search(query: str) -> list[Snippet]:
            return retrieve_all(retrieval, [query], query, self.reranker, turn.usage).snippets

        yield from self.strategy.more_searches(turn, self.llm, search)

    def _search(self, turn: Turn) -> Iterator[Event]:
        q, retrieval, queries = self.params, turn.retrieval, turn.queries
        votes, unfiltered = 1, None  # unfiltered: the search without self-querying's filters
        if q.enhancing:
            enhanced = enhance(self.llm, q, retrieval, turn.question, queries, turn.usage)
            yield Event("phase", {"name": "rag:query enhancement", **enhanced.notes})
            if enhanced.restrict.values or enhanced.restrict.ranges:
                unfiltered = retrieval, queries
            restrict = retrieval.restrict.narrowed(enhanced.restrict)
            retrieval = replace(retrieval, restrict=restrict, dense=enhanced.dense)
            queries, votes = enhanced.queries, q.multi_query_min_votes
        yield Event("phase", {"name": "rag:retrieval"})
        result = retrieve_all(retrieval, queries, turn.question, self.reranker, turn.usage, votes)
        if not result.snippets and unfiltered is not None:
            # self-querying's filters found nothing: its guess was wrong, search as asked
            result = retrieve_all(*unfiltered, turn.question, self.reranker, turn.usage)
        if result.cache_hits is not None:
            yield Event("phase", {"name": "rag:cache", "hits": result.cache_hits, "of": len(queries)})
        if self.reranker is not None:
            skipped = {"skipped": result.rerank_skipped} if result.rerank_skipped else {}
            yield Event("phase", {"name": "rag:rerank", "backend": self.rerank_backend, **skipped})
        turn.retrieval, turn.queries, turn.found = retrieval, queries, result.snippets


@dataclass(frozen=True)
class Assemble:
    """What the LLM is sent: context assembly (neighbours, segments, duplicates, cap per source),
    the prompt chunks, the token budget; then the sources are announced (``sources.final``,
    always before generation) and the snippets numbered as the answer cites them."""

    llm: LlmService
    params: AssemblyParams
    chunking: PromptChunking
    dedup_embed: Callable[[list[str]], list[list[float]]] | None
    name: ClassVar[str] = "assemble"

    def run(self, turn: Turn) -> Iterator[Event]:
        p = self.params
        neighbours = partial(with_neighbours, turn.retrieval, width=p.neighbours)
        extract = partial(llm_segment, self.llm, turn.usage)  # context.segment.method=llm
        assembled = assemble(turn.found, turn.question, p, neighbours, self.dedup_embed, extract)
        chunks = [x for x in self.chunking.chunks(assembled, turn.request.whole_documents) if x.content]
        if p.max_tokens > 0:
            chunks = within_budget(chunks, p.max_tokens, token_counter(p.tokenizer))
        turn.snippets, turn.sent = chunks, sources(chunks)
        yield Event("sources.final", {"items": turn.sent})
        numbers = {d["url"]: n for n, d in enumerate(turn.sent, start=1)}  # what the answer cites them by
        turn.items = [Item(x.content, shown(x.title, numbers[x.url])) for x in chunks]
        if not turn.items and turn.ctx.history and turn.request.doc_id is None:
            # chat memory: nothing found, the conversation itself may hold the answer
            conversation = "\n".join(f"{m['role']}: {m['content']}" for m in turn.ctx.history)
            turn.items = [Item(conversation, shown(CONVERSATION))]
        if not turn.items:
            raise DatafariError("ragNoFileFound", "The search returned no usable content.", lang=turn.request.lang)


@dataclass(frozen=True)
class Pack:
    """The snippets packed into prompts under ``prompt.max.request.size``, and the calls before
    the last (``chunking.strategy``: refine one pack after the other, or map-reduce)."""

    llm: LlmService
    mapreduce: bool  # chunking.strategy=mapreduce
    concurrency: int  # llm.maxConcurrent, for map-reduce's calls
    limit: int  # prompt.max.request.size
    name: ClassVar[str] = "pack"

    def run(self, turn: Turn) -> Iterator[Event]:
        if self.mapreduce:
            plan = partial(mapreduce, self.llm, turn.usage, concurrency=self.concurrency)
        else:
            plan = partial(refine, self.llm, turn.usage)

        def run(progress: Callable[[str, int, int | None], None]) -> FinalCall:
            return plan(progress, turn.ctx, turn.items, self.limit)

        # progress events are only watched when streaming; otherwise no thread to carry them
        turn.final = (yield from with_progress(run)) if turn.stream else run(ignore)


@dataclass(frozen=True)
class Generate:
    """The answer, as ``rag.strategy`` writes it (:mod:`.answer_strategies`)."""

    llm: LlmService
    strategy: AnswerStrategy
    limit: int  # prompt.max.request.size
    name: ClassVar[str] = "generate"

    def run(self, turn: Turn) -> Iterator[Event]:
        yield Event("phase", {"name": "rag:response generation"})
        yield from self.strategy.write(turn, self.llm, self.limit)


@dataclass(frozen=True)
class Cite:
    """``message.final``: the answer as shown, judged on the passages sent (:mod:`.finish`)."""

    relevance: AnswerRelevance
    min_confidence: float  # rag.minConfidence
    name: ClassVar[str] = "cite"

    def run(self, turn: Turn) -> Iterator[Event]:
        passages = [(x.url, x.content, x.score) for x in turn.snippets]
        relevant = self.relevance(turn.question, turn.raw, turn.ctx.abstention)
        evidence = Evidence(passages, turn.ctx.abstention, turn.steps, turn.faithfulness, relevant, self.min_confidence)
        yield finished(turn.raw, turn.sent, turn.usage, turn.started, turn.request.lang, evidence)
        turn.done = True


@dataclass(frozen=True)
class Converse:
    """``gpt``: an answer from the conversation alone, no search."""

    llm: LlmService
    hygiene: Hygiene
    history_size: int  # chat.memory.size
    name: ClassVar[str] = "converse"

    def run(self, turn: Turn) -> Iterator[Event]:
        history = self.hygiene.history(turn.request.history, self.history_size)
        yield Event("sources.final", {"items": []})
        yield Event("phase", {"name": "rag:response generation"})
        chat = replace(turn.ctx, history=history, reasoning=False).prompt("chat")
        raw = yield from final_answer(self.llm, FinalCall(chat), turn.usage, turn.stream)
        yield finished(raw, [], turn.usage, turn.started, turn.request.lang, Evidence([], turn.ctx.abstention))
        turn.done = True


@dataclass(frozen=True)
class Agent:
    """``agentic``: the LLM answers through the product's tools, each run with the user's access."""

    enabled: bool  # agentic.enabled, and an LLM that calls tools
    llm: Any  # an LLM service with ``chat`` (tools)
    limits: AgentLimits
    summarize: Callable[..., str]
    external_tools: ExternalTools | None
    name: ClassVar[str] = "agent"

    def run(self, turn: Turn) -> Iterator[Event]:
        if not self.enabled:
            raise DatafariError("agenticErrorNotEnabled", "The agentic mode needs an LLM that calls tools.")
        lang = turn.request.lang
        run = AgentRun(self.limits, turn.retrieval, self.llm, self.summarize, turn.usage, lang, self.external_tools)
        yield Event("phase", {"name": "rag:agent"})
        raw = ""
        for kind, data in run.events(turn.ctx):
            if kind == "answer":
                raw = data
            else:
                yield Event(kind, data)
        found = run.sources
        yield Event("sources.final", {"items": found})
        yield Event("phase", {"name": "rag:response generation"})
        if turn.stream and clean_answer(raw):
            yield Event("message.delta", {"text": clean_answer(raw)})
        passages = [(d["url"], d.get("content", ""), 0.0) for d in found]
        yield finished(raw, found, turn.usage, turn.started, lang, Evidence(passages, turn.ctx.abstention))
        turn.done = True


def shown(title: str, number: int | None = None) -> Any:
    """How a snippet of ``title`` is written into a prompt (numbered as the answer cites it)."""
    return lambda content: snippet_text(title, content, number)
