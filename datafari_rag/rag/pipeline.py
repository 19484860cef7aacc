"""The RAG pipeline, step by step, as Datafari runs it (and with its gaps closed).

1. retrieve (bm25 | vector | rrf, or one document by id) with the user's access filter
2. chunk each passage to ``chunking.chunk.size`` characters
3. pack chunks into prompts under ``prompt.max.request.size`` (whole prompt counted)
4. refine or map-reduce with the LLM
5. cite: the documents whose text was sent to the LLM
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import chain
from typing import Any

from ..config import ConfigError, Settings
from ..errors import DatafariError
from ..filters import NO_FILTER, SourceFilter
from ..llm import LlmError, LlmService, Usage
from ..llm.deadline import answer_within, in_own_context
from ..llm.sampling import sampled_at
from ..logs import QUESTIONS
from ..prompts import PromptContext, snippet_text
from ..prompts.overrides import TemplateError, parsed_templates
from ..retrieval import RetrievalContext, Snippet, retrieve_all, retrieve_document
from ..retrieval.cache import SemanticCache
from ..retrieval.neighbours import with_neighbours
from ..retrieval.params import RetrievalParams
from ..retrieval.rerank import Reranker
from ..security import UserAccess
from ..solr import SolrError
from ..solr.collection import Collection
from .agentic import AgentLimits, AgentRun
from .assembly import AssemblyParams, assemble, llm_segment, token_counter, within_budget
from .chunking import chunk_snippets
from .citations import MARKER, SourcesUsedFilter, citations, clean_answer, references
from .confidence import confidence, is_abstention, relevance
from .faq import Faq, FaqHit
from .history import EVERY_MESSAGE, HistoryFilter, classes_of, prompt_history
from .hygiene import Hygiene
from .mcp_tools import ExternalTools
from .packing import Item, PromptTooLarge
from .query_enhancement import enhance
from .query_params import QueryParams
from .reasoning import (
    ANSWER_STRATEGIES,
    AnswerAfterReasoning,
    AnswerStrategy,
    Check,
    followup,
    reflect,
    split_reasoning,
    tree_of_thought,
)
from .rewriting import search_queries
from .strategies import FinalCall, mapreduce, refine
from .thinking import ThinkingSplitter, without_thinking
from .topic_guard import TopicGuard

log = logging.getLogger(__name__)
CONVERSATION = "This conversation"  # the title the conversation has when it is the only context
INTERNAL_EVENTS = frozenset({"query.rewritten"})  # for the server's own use, never sent to a client


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


@dataclass(frozen=True)
class RagAnswer:
    message: str
    documents: list[dict[str, str]]  # Datafari's: every source sent to the LLM
    references: list[dict[str, Any]] = field(default_factory=list)  # the sources the answer cites
    usage: dict[str, Any] = field(default_factory=dict)  # tokens of every call: rewriting, map/refine, final
    latency_ms: int = 0
    quality: dict[str, Any] = field(default_factory=dict)  # citations, confidence(_basis), reasoning_steps


QUALITY_KEYS = ("citations", "confidence", "confidence_basis", "reasoning_steps")


@dataclass(frozen=True)
class Pipeline:
    settings: Settings
    main: Collection
    vectors: Collection
    llm: LlmService
    cache: SemanticCache | None = None  # cache.enabled
    guard: TopicGuard | None = None  # forbidden.enabled
    external_tools: ExternalTools | None = None  # agentic.mcp.servers
    reranker: Reranker | None = None  # rerank.enabled
    faq: Faq | None = None  # faq.enabled
    dedup_embed: Callable[[list[str]], list[list[float]]] | None = None  # context.dedup.method=embedding
    embed: Callable[[list[str]], list[list[float]]] | None = None  # the chunks' model (retrieval.method=memory)
    retrieval_params: RetrievalParams = field(init=False)  # what retrieval reads of the settings, once
    strategy: AnswerStrategy = field(init=False)  # rag.strategy's behaviour, looked up once
    query_params: QueryParams = field(init=False)  # what rewriting and query enhancement read, once
    assembly_params: AssemblyParams = field(init=False)  # what context assembly reads, once
    agent_limits: AgentLimits = field(init=False)  # agentic mode's limits, once
    templates: Mapping[str, str] = field(init=False)  # prompt.templates, checked once
    history_filter: HistoryFilter = field(init=False)  # chat.history.blockClasses

    def __post_init__(self) -> None:
        object.__setattr__(self, "retrieval_params", RetrievalParams.of(self.settings))
        object.__setattr__(self, "strategy", ANSWER_STRATEGIES[self.settings.rag_strategy])
        object.__setattr__(self, "query_params", QueryParams.of(self.settings))
        object.__setattr__(self, "assembly_params", AssemblyParams.of(self.settings))
        object.__setattr__(self, "agent_limits", AgentLimits.of(self.settings))
        try:
            templates = parsed_templates(self.settings.prompt_templates, "prompt.templates")
        except TemplateError as exc:
            raise ConfigError(str(exc)) from None
        object.__setattr__(self, "templates", templates)
        object.__setattr__(self, "history_filter", HistoryFilter(classes_of(self.settings.chat_history_block_classes)))

    def prompt_context(self, request: RagRequest) -> PromptContext:
        s = self.settings
        size = s.chat_history_size if s.chat_memory_enabled else 0
        hygiene = self.query_params.hygiene
        history = hygiene.history(request.history, size)
        question = hygiene.query(request.question or request.query)
        # the configuration's (or workflow's) instructions, then the conversation's own
        instructions = "\n".join(i.strip() for i in (s.prompt_instructions, request.instructions) if i.strip())
        return PromptContext(
            question,
            request.format,
            request.lang,
            history,
            instructions=instructions,
            layout=s.prompt_layout,
            templates={**self.templates, **request.prompts},  # the room's before the workflow's
        )

    def events(self, request: RagRequest, access: UserAccess, stream: bool = False) -> Generator[Event, None, None]:
        """The pipeline as events: phases, ``sources.final`` (always before generation),
        ``message.delta`` pieces, then ``message.final`` with the answer and token usage.

        Raises :class:`DatafariError`; ``ai/rag`` and ``ai/stream`` both consume this, so the final
        text is the same for the same LLM output. With ``stream``, only the final LLM call is
        streamed; closing the iterator cancels it. Every LLM call of the answer ends within
        ``llm.deadline`` of its start (:mod:`datafari_rag.llm.deadline`).
        """
        yield from in_own_context(self._within_deadline(request, access, stream))

    def _within_deadline(self, request: RagRequest, access: UserAccess, stream: bool) -> Generator[Event, None, None]:
        usage = Usage()  # every call's tokens; a failure carries what was used before it
        try:
            with answer_within(self.settings.llm_deadline), sampled_at(request.temperature):
                yield from self._events(request, access, stream, usage)
        except DatafariError as exc:
            exc.usage = usage.as_dict()
            raise

    def _events(self, request: RagRequest, access: UserAccess, stream: bool, usage: Usage) -> Iterator[Event]:
        s = self.settings
        started = time.monotonic()
        keep = self.history_filter.narrowed(request.history_filter)
        request = replace(request, history=prompt_history(request.history, keep, s.chat_history_tool_results))
        if not s.enable_rag:
            raise DatafariError("ragErrorNotEnabled", "RAG answers are turned off (ai.enable.rag=false).")
        if s.rag_enable_logs:  # opt-in: a question may hold what its user would not have logged
            QUESTIONS.info("RAG request processed: %r", request.query)
        ctx = replace(self.prompt_context(request), reasoning=self.strategy.reasoning)
        if not ctx.query:
            raise DatafariError("ragBadRequest", "The query is empty once cleaned.")
        if self.guard is not None:  # before anything runs: no rewriting, no search, no answer
            yield Event("phase", {"name": "rag:guard"})
            self.guard.check(request.question or request.query, access.username, usage)
        params = self.retrieval_params
        if request.top_k is not None:  # chat-core's top_k: this answer's depth
            params = replace(params, max_files=request.top_k, top_k=request.top_k)
        retrieval = RetrievalContext(
            self.main, self.vectors, params, access, request.filters, self.cache, embed=self.embed
        )
        if self.faq is not None and request.mode == "rag" and request.doc_id is None:
            hit = self._faq_hit(request, access)
            if hit is not None:
                yield from self._faq_answer(hit, usage, stream, started, request.lang, ctx.abstention)
                return
        if request.mode != "rag":
            yield from self._other_mode(request, ctx, retrieval, usage, stream, started)
            return
        try:
            q = self.query_params
            if q.rewrite or (q.sub_queries and request.history):
                yield Event("phase", {"name": "rag:query rewriting"})
            queries = search_queries(self.llm, q, request.query, request.history, usage)
            for rewritten in (q for q in queries if q != request.query):  # for the store; streams do not show it
                yield Event("query.rewritten", {"query": rewritten})
            question = request.question or request.query
            if request.doc_id is not None:
                yield Event("phase", {"name": "rag:retrieval"})
                found = retrieve_document(retrieval, request.doc_id, queries[0])
                if found is None:
                    reason = f"No readable document with id {request.doc_id!r}."
                    raise DatafariError("ragFileNotFound", reason, lang=request.lang)
                steps: list[str] = []  # reasoning_steps: multihop's searches, reflect's checks, cot's steps
            else:
                found, steps = yield from self._search(retrieval, question, queries, usage)
            snippets = self._assembled(retrieval, found, question, request.whole_documents, usage)
            sent = sources(snippets)
            yield Event("sources.final", {"items": sent})
            numbers = {d["url"]: n for n, d in enumerate(sent, start=1)}  # what the answer cites them by
            items = [Item(x.content, _shower(x.title, numbers[x.url])) for x in snippets]
            if not items and ctx.history and request.doc_id is None:
                # chat memory: nothing found, the conversation itself may hold the answer
                conversation = "\n".join(f"{m['role']}: {m['content']}" for m in ctx.history)
                items = [Item(conversation, _shower(CONVERSATION))]
            if not items:
                raise DatafariError("ragNoFileFound", "The search returned no usable content.", lang=request.lang)
            if s.chunking_strategy == "mapreduce":
                plan = partial(mapreduce, self.llm, usage, concurrency=s.llm_max_concurrent)
            else:
                plan = partial(refine, self.llm, usage)

            def run(progress: Callable[[str, int, int | None], None]) -> FinalCall:
                return plan(progress, ctx, items, s.max_request_size)

            # progress events are only watched when streaming; otherwise no thread to carry them
            final = (yield from _with_progress(run)) if stream else run(_ignore)
            yield Event("phase", {"name": "rag:response generation"})
            raw, faithfulness = yield from self._write(final, ctx, items, usage, stream, steps)
        except SolrError as exc:
            raise DatafariError("ragTechnicalError", "The search failed.", detail=str(exc)) from exc
        except LlmError as exc:
            raise DatafariError("ragTechnicalError", "The language model failed.", detail=str(exc)) from exc
        except PromptTooLarge as exc:
            raise DatafariError("ragTechnicalError", f"Prompt size limit: {exc}") from exc
        passages = [(x.url, x.content, x.score) for x in snippets]
        relevant = self._relevance(question, raw, ctx.abstention)
        evidence = Evidence(passages, ctx.abstention, steps, faithfulness, relevant, s.min_confidence)
        yield _finished(raw, sent, usage, started, request.lang, evidence)

    def _relevance(self, question: str, raw: str, abstention: str) -> float | None:
        """How likely the answer answers the question (rag.confidence.relevance); None when not
        measured: turned off, an abstention, or the embedding service failing (the confidence then
        rests on the sources' support alone, as the log says)."""
        text = clean_answer(raw)
        if not self.settings.relevance_weighed or self.embed is None or not text or is_abstention(text, abstention):
            return None
        try:
            return relevance(question, text, self.embed)
        except RuntimeError as exc:  # the embedding service's EmbeddingError is one
            log.warning("the answer's relevance not measured, its confidence is its support only: %s", exc)
            return None

    def _faq_hit(self, request: RagRequest, access: UserAccess) -> FaqHit | None:
        """The FAQ entry that answers the question; a FAQ that cannot be read (Solr, the embedding
        service) answers nothing and the question goes the usual way."""
        assert self.faq is not None
        try:
            return self.faq.answer(request.question or request.query, access)
        except (SolrError, RuntimeError) as exc:  # the embedding service's EmbeddingError is one
            log.warning("FAQ not read, the question goes the usual way: %s", exc)
            return None

    def _faq_answer(
        self, hit: FaqHit, usage: Usage, stream: bool, started: float, lang: str | None, abstention: str
    ) -> Iterator[Event]:
        """A curated entry's answer, with the entry as its one source: no retrieval, no LLM."""
        yield Event("phase", {"name": "rag:faq", "question": hit.question, "score": round(hit.score, 4)})
        sent = [{"id": hit.id, "title": hit.question, "url": hit.url, "content": hit.answer}]
        yield Event("sources.final", {"items": sent})
        if stream:
            yield Event("message.delta", {"text": hit.answer})
        raw = f"{hit.answer}\n{MARKER}: 1"  # the entry is what the answer uses
        steps = [f"faq: {hit.question} ({hit.score:.2f})"]
        yield _finished(
            raw, sent, usage, started, lang, Evidence([(hit.url, hit.answer, hit.score)], abstention, steps)
        )

    def _other_mode(
        self,
        request: RagRequest,
        ctx: PromptContext,
        retrieval: RetrievalContext,
        usage: Usage,
        stream: bool,
        started: float,
    ) -> Iterator[Event]:
        """``gpt``: an answer from the conversation alone, no search. ``agentic``: the LLM answers
        through the product's tools, each run with the user's access."""
        s = self.settings
        sources: list[dict[str, Any]] = []
        try:
            if request.mode == "gpt":
                history = self.query_params.hygiene.history(request.history, s.chat_history_size)
                yield Event("sources.final", {"items": []})
                yield Event("phase", {"name": "rag:response generation"})
                chat = replace(ctx, history=history, reasoning=False).prompt("chat")
                raw = yield from self._final(FinalCall(chat), usage, stream)
            else:
                if not s.agentic_enabled or not hasattr(self.llm, "chat"):
                    raise DatafariError("agenticErrorNotEnabled", "The agentic mode needs an LLM that calls tools.")
                llm: Any = self.llm
                run = AgentRun(
                    self.agent_limits, retrieval, llm, self.summarize, usage, request.lang, self.external_tools
                )
                yield Event("phase", {"name": "rag:agent"})
                raw = ""
                for kind, data in run.events(ctx):
                    if kind == "answer":
                        raw = data
                    else:
                        yield Event(kind, data)
                sources = run.sources
                yield Event("sources.final", {"items": sources})
                yield Event("phase", {"name": "rag:response generation"})
                if stream and clean_answer(raw):
                    yield Event("message.delta", {"text": clean_answer(raw)})
        except SolrError as exc:
            raise DatafariError("ragTechnicalError", "The search failed.", detail=str(exc)) from exc
        except LlmError as exc:
            raise DatafariError("ragTechnicalError", "The language model failed.", detail=str(exc)) from exc
        passages = [(d["url"], d.get("content", ""), 0.0) for d in sources]
        yield _finished(raw, sources, usage, started, request.lang, Evidence(passages, ctx.abstention))

    def _search(
        self, retrieval: RetrievalContext, question: str, queries: list[str], usage: Usage
    ) -> Generator[Event, None, tuple[list[Snippet], list[str]]]:
        """Query enhancement, retrieval (with the cache and the reranker), then multihop's
        follow-ups: the passages found and the searches multihop added."""
        s, q = self.settings, self.query_params
        votes, unfiltered = 1, None  # unfiltered: the search without self-querying's filters
        if q.enhancing:
            enhanced = enhance(self.llm, q, retrieval, question, queries, usage)
            yield Event("phase", {"name": "rag:query enhancement", **enhanced.notes})
            if enhanced.restrict.values or enhanced.restrict.ranges:
                unfiltered = retrieval, queries
            restrict = retrieval.restrict.narrowed(enhanced.restrict)
            retrieval = replace(retrieval, restrict=restrict, dense=enhanced.dense)
            queries, votes = enhanced.queries, q.multi_query_min_votes
        yield Event("phase", {"name": "rag:retrieval"})
        result = retrieve_all(retrieval, queries, question, self.reranker, usage, votes)
        if not result.snippets and unfiltered is not None:
            # self-querying's filters found nothing: its guess was wrong, search as asked
            result = retrieve_all(*unfiltered, question, self.reranker, usage)
        if result.cache_hits is not None:
            yield Event("phase", {"name": "rag:cache", "hits": result.cache_hits, "of": len(queries)})
        if self.reranker is not None:
            skipped = {"skipped": result.rerank_skipped} if result.rerank_skipped else {}
            yield Event("phase", {"name": "rag:rerank", "backend": s.rerank_backend, **skipped})
        if self.strategy.hops:
            return (yield from self._hops(retrieval, question, queries, result.snippets, usage))
        return result.snippets, []

    def _write(
        self, final: FinalCall, ctx: PromptContext, items: list[Item], usage: Usage, stream: bool, steps: list[str]
    ) -> Generator[Event, None, tuple[str, float | None]]:
        """The last call as ``rag.strategy`` writes it: the raw answer (without cot's steps, which go
        to ``steps`` with reflect's verdicts) and the faithfulness check's verdict (reflect)."""
        s = self.settings
        if self.strategy.branches:  # tot: candidates scored before anything is shown
            yield Event("phase", {"name": "rag:tree of thought"})
            raw, tried = tree_of_thought(self.llm, ctx, items, s.max_request_size, s.tot_branches, s.tot_depth, usage)
            best = max(tried, key=lambda b: b.score, default=None)
            steps += [b.step() for b in tried]
            if best is not None:
                steps.append(f"kept: branch {best.level}.{best.number}")
            if stream and clean_answer(raw):
                yield Event("message.delta", {"text": clean_answer(raw)})
            return raw, best.score if best is not None and best.check is not None else None
        if not self.strategy.checked:
            raw = yield from self._final(final, usage, stream, reasoning=ctx.reasoning)
            if not ctx.reasoning:
                return raw, None
            written, raw = split_reasoning(raw)
            steps += written
            return raw, None
        draft = yield from self._final(final, usage, stream=False)  # checked before anything is shown
        yield Event("phase", {"name": "rag:reflect"})
        raw, checks = reflect(self.llm, ctx, items, draft, s.max_request_size, s.reflect_max_rounds, usage)
        steps += [_check_step(n, c) for n, c in enumerate(checks, start=1)]
        if stream and clean_answer(raw):
            yield Event("message.delta", {"text": clean_answer(raw)})
        return raw, checks[-1].faithfulness if checks else None

    def _hops(
        self, retrieval: RetrievalContext, question: str, queries: list[str], found: list[Snippet], usage: Usage
    ) -> Generator[Event, None, tuple[list[Snippet], list[str]]]:
        """multihop: while the model asks for another search (at most ``rag.multihop.maxHops``),
        run it and add what it finds that is new. Returns the passages and the searches made."""
        searches, steps = list(queries), []
        found = list(found)
        for hop in range(1, self.settings.multihop_max_hops + 1):
            query = followup(self.llm, question, [x.content for x in found], searches, usage)
            if query is None:
                break
            yield Event("phase", {"name": "rag:multihop", "hop": hop, "query": query})
            known = {(x.id, x.content) for x in found}
            more = retrieve_all(retrieval, [query], query, self.reranker, usage).snippets
            found += [x for x in more if (x.id, x.content) not in known]
            searches.append(query)
            steps.append(f"search: {query}")
        return found, steps

    def _final(
        self, final: FinalCall, usage: Usage, stream: bool, reasoning: bool = False
    ) -> Generator[Event, None, str]:
        """Runs the last call (streamed or not); returns the raw answer. Streamed pieces go out
        without the SOURCES_USED line, and with ``reasoning`` (cot) without the steps before the
        answer: what is shown is what the final text will be."""
        if final.prompt is None:
            return final.fallback
        if not stream:
            text = without_thinking(self.llm.generate(final.prompt.messages(), usage))
            return text if clean_answer(text) else final.fallback
        pieces: list[str] = []
        thinking, shown = ThinkingSplitter(), SourcesUsedFilter()
        answer = AnswerAfterReasoning() if reasoning else None
        for raw_piece in chain(self.llm.stream(final.prompt.messages(), usage), [None]):
            thought, piece = thinking.feed(raw_piece) if raw_piece is not None else thinking.finish()
            if thought:  # a reasoning model's thoughts: their own events, never the answer
                yield Event("think", {"text": thought})
            pieces.append(piece)
            if visible := shown.feed(answer.feed(piece) if answer else piece):
                yield Event("message.delta", {"text": visible})
        if visible := shown.feed(answer.finish()) + shown.finish() if answer else shown.finish():
            yield Event("message.delta", {"text": visible})
        text = "".join(pieces)
        if clean_answer(text):
            return text
        if final.fallback:  # nothing came: the refine chain's last answer stands, shown whole
            yield Event("message.delta", {"text": final.fallback})
        return final.fallback

    def _assembled(
        self,
        retrieval: RetrievalContext,
        found: list[Snippet],
        question: str,
        whole: bool = False,
        usage: Usage | None = None,
    ) -> list[Snippet]:
        """Context assembly (:mod:`.assembly`), then the prompt chunks (none with ``whole``), then
        the token budget."""
        p = self.assembly_params
        neighbours = partial(with_neighbours, retrieval, width=p.neighbours)
        extract = partial(llm_segment, self.llm, usage)  # context.segment.method=llm
        assembled = assemble(found, question, p, neighbours, self.dedup_embed, extract)
        chunks = [x for x in self._chunks(assembled, whole) if x.content]
        if p.max_tokens <= 0:
            return chunks
        return within_budget(chunks, p.max_tokens, token_counter(p.tokenizer))

    def _chunks(self, found: list[Snippet], whole: bool = False) -> list[Snippet]:
        """The retrieved text cleaned for a prompt, cut into ``chunking.chunk.size`` pieces unless
        ``chunking.enable`` is false or the request wants texts ``whole`` (then packing cuts only a
        text too large for a prompt alone)."""
        s = self.settings
        cleaned = [_cleaned(x, self.query_params.hygiene) for x in found]
        return chunk_snippets(cleaned, s.chunk_size) if s.chunking_enabled and not whole else cleaned

    def answer(self, request: RagRequest, access: UserAccess, wrap: Wrap | None = None) -> RagAnswer:
        """The answer and its sources, for ``ai/rag``; ``wrap`` sees the events on their way (the
        conversation store records the turn)."""
        documents: list[dict[str, str]] = []
        events = self.events(request, access)
        for event in wrap(events) if wrap else events:
            if event.type == "sources.final":
                documents = event.data["items"]
            elif event.type == "message.final":
                data = event.data
                quality = {k: data[k] for k in QUALITY_KEYS}
                return RagAnswer(
                    data["text"], documents, data["references"], data["usage"], data["latency_ms"], quality
                )
        raise DatafariError("ragNoValidAnswer")

    def summarize(self, doc_id: str, lang: str | None, access: UserAccess) -> str:
        s = self.settings
        if not s.enable_summarization:
            raise DatafariError(
                "summarizationErrorNotEnabled", "Summaries are turned off (ai.enable.summarization=false)."
            )
        # no query below: the whole document
        retrieval = RetrievalContext(self.main, self.vectors, self.retrieval_params, access, embed=self.embed)
        try:
            found = retrieve_document(retrieval, doc_id, None)
            if found is None:
                reason = f"No readable document with id {doc_id!r}."
                raise DatafariError("summarizationNoFileFound", reason, lang=lang)
            chunks = [x for x in self._chunks(found) if x.content.strip()]
            if not chunks:
                raise DatafariError("summarizationEmptyFile", f"The document {doc_id!r} has no text.", lang=lang)
            items = [Item(x.content, _shower(x.title)) for x in chunks]
            ctx = PromptContext("", None, lang)
            usage = Usage()
            final = refine(self.llm, usage, _ignore, ctx, items, s.max_request_size, "summarize", "summarize_refine")
            asked = self.llm.generate(final.prompt.messages(), usage) if final.prompt is not None else ""
            summary = asked.strip() or final.fallback
        except SolrError as exc:
            raise DatafariError("summarizationTechnicalError", "The search failed.", detail=str(exc)) from exc
        except (LlmError, PromptTooLarge) as exc:
            raise DatafariError("summarizationTechnicalError", "The language model failed.", detail=str(exc)) from exc
        if not summary.strip():
            raise DatafariError("summarizationTechnicalError", "The LLM returned an empty summary.")
        return summary.strip()


@dataclass(frozen=True)
class Evidence:
    """What an answer is judged on: the passages sent (url, text, score), the abstention sentence
    asked for, the reasoning steps, and the faithfulness check's verdict (reflect)."""

    passages: list[tuple[str, str, float]]
    abstention: str
    steps: list[str] = field(default_factory=list)
    faithfulness: float | None = None
    relevance: float | None = None  # the chance the answer answers the question (rag.confidence.relevance)
    min_confidence: float = 0.0  # below it (the relevance weighed) the abstention sentence is shown


def _finished(
    raw: str, sources: list[dict[str, Any]], usage: Usage, started: float, lang: str | None, evidence: Evidence
) -> Event:
    """``message.final``: the answer as shown, its usage, the sources it cites (``references``, and
    ``citations`` with excerpt and score), its confidence, reasoning steps and latency."""
    text = clean_answer(raw)
    if not text:
        raise DatafariError("ragNoValidAnswer", "The LLM returned an empty answer.", lang=lang)
    latency_ms = int((time.monotonic() - started) * 1000)
    texts = [p[1] for p in evidence.passages]
    abstained = is_abstention(text, evidence.abstention)
    score, basis = confidence(text, texts, evidence.faithfulness, abstained, evidence.relevance)
    cited, steps = references(raw, sources), evidence.steps
    excerpts = citations(raw, sources, evidence.passages)
    # not sure enough: say so instead; only a confidence that weighs the relevance is calibrated for it
    if texts and not abstained and evidence.relevance is not None and score < evidence.min_confidence:
        text, cited, excerpts = evidence.abstention, [], []
        steps = [*steps, f"confidence {score} below rag.minConfidence {evidence.min_confidence}: abstained"]
    data = {
        "text": text,
        "usage": usage.as_dict(),
        "references": cited,
        "citations": excerpts,
        "confidence": score,
        "confidence_basis": basis,
        "reasoning_steps": steps,
        "latency_ms": latency_ms,
    }
    return Event("message.final", data)


def _check_step(number: int, check: Check) -> str:
    unsupported = "; ".join(check.unsupported)
    verdict = f"check {number}: {check.supported} of {check.statements} statements supported by the sources"
    return verdict + (f" (not supported: {unsupported})" if unsupported else "")


def _cleaned(x: Snippet, hygiene: Hygiene) -> Snippet:
    return replace(x, title=hygiene.snippet(x.title), content=hygiene.snippet(x.content))


def _shower(title: str, number: int | None = None) -> Any:
    return lambda content: snippet_text(title, content, number)


def sources(snippets: list[Snippet]) -> list[dict[str, str]]:
    """What was sent to the LLM, one entry per url (the first chunk's text as content)."""
    seen: dict[str, dict[str, str]] = {}
    for x in snippets:
        seen.setdefault(x.url, {"id": x.id, "title": x.title, "url": x.url, "content": x.content})
    return list(seen.values())


def _ignore(name: str, step: int, of: int | None) -> None:
    """Progress of a call nobody watches."""


def _with_progress(
    run: Callable[[Callable[[str, int, int | None], None]], FinalCall],
) -> Generator[Event, None, FinalCall]:
    """Runs a strategy in a thread, yielding its progress as ``phase`` events as they happen."""
    events: queue.Queue[Event | None] = queue.Queue()
    outcome: dict[str, Any] = {}

    def progress(name: str, step: int, of: int | None) -> None:
        events.put(Event("phase", {"name": name, "step": step, **({"of": of} if of else {})}))

    def work() -> None:
        try:
            outcome["final"] = run(progress)
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc
        finally:
            events.put(None)

    threading.Thread(target=work, daemon=True, name="rag-strategy").start()
    while (event := events.get()) is not None:
        yield event
    if "error" in outcome:
        raise outcome["error"]
    final: FinalCall = outcome["final"]
    return final
