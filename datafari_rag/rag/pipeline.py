"""The RAG pipeline: an answer as its steps (:mod:`.steps`), each timed (:mod:`.timing`):

guard → faq → rewrite → retrieve → assemble → pack → generate → cite

1. guard: a forbidden topic or personal data refused before anything runs (``forbidden.enabled``)
2. faq: a curated entry answers instead (``faq.enabled``)
3. rewrite: what is searched, rewritten with the conversation
4. retrieve: bm25 | vector | rrf | memory (or one document by id), with the user's access filter,
   query enhancement, the cache, the reranker, and the strategy's further searches (multihop)
5. assemble: context assembly, the prompt chunks, the token budget; the sources announced
6. pack: prompts under ``prompt.max.request.size``; refine or map-reduce with the LLM
7. generate: the answer as ``rag.strategy`` writes it (:mod:`.answer_strategies`)
8. cite: the sources the answer uses, its confidence, ``message.final``

``gpt`` answers from the conversation alone and ``agentic`` through the product's tools: a step
each, after the guard. Each step is built once per configuration with only its own parameters;
a request makes a :class:`.turn.Turn` they pass along.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field, replace

from ..config import ConfigError, Settings
from ..errors import DatafariError
from ..llm import LlmError, LlmService, Usage
from ..llm.deadline import answer_within, in_own_context
from ..llm.sampling import sampled_at
from ..logs import QUESTIONS
from ..prompts import PromptContext
from ..prompts.overrides import TemplateError, parsed_templates
from ..retrieval import RetrievalContext, retrieve_document
from ..retrieval.cache import SemanticCache
from ..retrieval.params import RetrievalParams
from ..retrieval.rerank import Reranker
from ..security import UserAccess
from ..solr import SolrError
from ..solr.collection import Collection
from .agentic import AgentLimits
from .answer_strategies import ANSWER_STRATEGIES, AnswerStrategy
from .assembly import AssemblyParams
from .chunking import PromptChunking
from .confidence import AnswerRelevance
from .faq import Faq
from .finish import QUALITY_KEYS, sources
from .generation import ignore
from .history import HistoryFilter, classes_of, prompt_history
from .mcp_tools import ExternalTools
from .packing import Item, PromptTooLarge
from .query_params import QueryParams
from .steps import (
    Agent,
    Assemble,
    Cite,
    Converse,
    FaqAnswer,
    Generate,
    Guard,
    Pack,
    Retrieve,
    Rewrite,
    Step,
    shown,
)
from .strategies import refine
from .timing import timed
from .topic_guard import TopicGuard
from .turn import Event, RagRequest, Turn, Wrap

__all__ = ["QUALITY_KEYS", "Event", "Pipeline", "RagAnswer", "RagRequest", "Wrap", "sources"]
INTERNAL_EVENTS = frozenset({"query.rewritten", "pipeline.timings"})  # the server's own, never sent to a client


@dataclass(frozen=True)
class RagAnswer:
    message: str
    documents: list[dict[str, str]]  # Datafari's: every source sent to the LLM
    references: list[dict[str, object]] = field(default_factory=list)  # the sources the answer cites
    usage: dict[str, object] = field(default_factory=dict)  # tokens of every call: rewriting, map/refine, final
    latency_ms: int = 0
    quality: dict[str, object] = field(default_factory=dict)  # citations, confidence(_basis), reasoning_steps
    timings: dict[str, float] = field(default_factory=dict)  # each step's seconds (Server-Timing)


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
    strategy: AnswerStrategy = field(init=False)  # rag.strategy, with its parameters
    query_params: QueryParams = field(init=False)  # what rewriting and query enhancement read, once
    chunking: PromptChunking = field(init=False)  # what the prompt chunks read, once
    templates: Mapping[str, str] = field(init=False)  # prompt.templates, checked once
    history_filter: HistoryFilter = field(init=False)  # chat.history.blockClasses
    steps: tuple[Step, ...] = field(init=False)  # a search's answer, in order
    modes: Mapping[str, tuple[Step, ...]] = field(init=False)  # gpt and agentic

    def __post_init__(self) -> None:
        s = self.settings
        set_ = partial_setter(self)
        set_("retrieval_params", RetrievalParams.of(s))
        set_("strategy", ANSWER_STRATEGIES[s.rag_strategy].of(s))
        set_("query_params", QueryParams.of(s))
        set_("chunking", PromptChunking.of(s))
        try:
            set_("templates", parsed_templates(s.prompt_templates, "prompt.templates"))
        except TemplateError as exc:
            raise ConfigError(str(exc)) from None
        set_("history_filter", HistoryFilter(classes_of(s.chat_history_block_classes)))
        first: tuple[Step, ...] = (Guard(self.guard),) if self.guard is not None else ()
        relevance = AnswerRelevance(self.embed if s.relevance_weighed else None)
        search: tuple[Step, ...] = (
            *first,
            *((FaqAnswer(self.faq),) if self.faq is not None else ()),
            Rewrite(self.llm, self.query_params),
            Retrieve(self.llm, self.query_params, self.strategy, self.reranker, s.rerank_backend),
            Assemble(self.llm, AssemblyParams.of(s), self.chunking, self.dedup_embed),
            Pack(self.llm, s.chunking_strategy == "mapreduce", s.llm_max_concurrent, s.max_request_size),
            Generate(self.llm, self.strategy, s.max_request_size),
            Cite(relevance, s.min_confidence),
        )
        set_("steps", search)
        agentic = s.agentic_enabled and hasattr(self.llm, "chat")
        agent = Agent(agentic, self.llm, AgentLimits.of(s), self.summarize, self.external_tools)
        converse = Converse(self.llm, self.query_params.hygiene, s.chat_history_size)
        set_("modes", {"gpt": (*first, converse), "agentic": (*first, agent)})

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
            reasoning=self.strategy.reasoning,
        )

    def events(self, request: RagRequest, access: UserAccess, stream: bool = False) -> Generator[Event, None, None]:
        """The pipeline as events: phases, ``sources.final`` (always before generation),
        ``message.delta`` pieces, then ``message.final`` with the answer and token usage, and last
        ``pipeline.timings`` (the server's own: each step's seconds).

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
                yield from self._run(self._begin(request, access, stream, usage))
        except DatafariError as exc:
            exc.usage = usage.as_dict()
            raise

    def _begin(self, request: RagRequest, access: UserAccess, stream: bool, usage: Usage) -> Turn:
        """The turn an answer starts with: the request's history filtered, the prompt's and the
        retrieval's contexts; refused when RAG is off or the query is empty once cleaned."""
        s = self.settings
        started = time.monotonic()
        keep = self.history_filter.narrowed(request.history_filter)
        request = replace(request, history=prompt_history(request.history, keep, s.chat_history_tool_results))
        if not s.enable_rag:
            raise DatafariError("ragErrorNotEnabled", "RAG answers are turned off (ai.enable.rag=false).")
        if s.rag_enable_logs:  # opt-in: a question may hold what its user would not have logged
            QUESTIONS.info("RAG request processed: %r", request.query)
        ctx = self.prompt_context(request)
        if not ctx.query:
            raise DatafariError("ragBadRequest", "The query is empty once cleaned.")
        params = self.retrieval_params
        if request.top_k is not None:  # chat-core's top_k: this answer's depth
            params = replace(params, max_files=request.top_k, top_k=request.top_k)
        retrieval = RetrievalContext(
            self.main, self.vectors, params, access, request.filters, self.cache, embed=self.embed
        )
        return Turn(request, access, ctx, retrieval, usage, stream, started, request.question or request.query)

    def _run(self, turn: Turn) -> Iterator[Event]:
        """The steps of the turn's mode, each timed, until one answers; then their timings."""
        steps = self.steps if turn.request.mode == "rag" else self.modes[turn.request.mode]
        try:
            for step in steps:
                yield from timed(step.name, step.run(turn), turn.timings)
                if turn.done:
                    break
        except SolrError as exc:
            raise DatafariError("ragTechnicalError", "The search failed.", detail=str(exc)) from exc
        except LlmError as exc:
            raise DatafariError("ragTechnicalError", "The language model failed.", detail=str(exc)) from exc
        except PromptTooLarge as exc:
            raise DatafariError("ragTechnicalError", f"Prompt size limit: {exc}") from exc
        if not turn.done:
            raise DatafariError("ragNoValidAnswer")
        yield Event("pipeline.timings", dict(turn.timings))

    def answer(self, request: RagRequest, access: UserAccess, wrap: Wrap | None = None) -> RagAnswer:
        """The answer and its sources, for ``ai/rag``; ``wrap`` sees the events on their way (the
        conversation store records the turn)."""
        documents: list[dict[str, str]] = []
        answer: RagAnswer | None = None
        events = self.events(request, access)
        for event in wrap(events) if wrap else events:
            if event.type == "sources.final":
                documents = event.data["items"]
            elif event.type == "message.final":
                data = event.data
                quality = {k: data[k] for k in QUALITY_KEYS}
                answer = RagAnswer(
                    data["text"], documents, data["references"], data["usage"], data["latency_ms"], quality
                )
            elif event.type == "pipeline.timings" and answer is not None:
                answer = replace(answer, timings=event.data)
        if answer is None:
            raise DatafariError("ragNoValidAnswer")
        return answer

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
            chunks = [x for x in self.chunking.chunks(found) if x.content.strip()]
            if not chunks:
                raise DatafariError("summarizationEmptyFile", f"The document {doc_id!r} has no text.", lang=lang)
            items = [Item(x.content, shown(x.title)) for x in chunks]
            ctx = PromptContext("", None, lang)
            usage = Usage()
            final = refine(self.llm, usage, ignore, ctx, items, s.max_request_size, "summarize", "summarize_refine")
            asked = self.llm.generate(final.prompt.messages(), usage) if final.prompt is not None else ""
            summary = asked.strip() or final.fallback
        except SolrError as exc:
            raise DatafariError("summarizationTechnicalError", "The search failed.", detail=str(exc)) from exc
        except (LlmError, PromptTooLarge) as exc:
            raise DatafariError("summarizationTechnicalError", "The language model failed.", detail=str(exc)) from exc
        if not summary.strip():
            raise DatafariError("summarizationTechnicalError", "The LLM returned an empty summary.")
        return summary.strip()


def partial_setter(frozen: object) -> Callable[[str, object], None]:
    """Sets a field of a frozen dataclass in its ``__post_init__``."""
    return lambda name, value: object.__setattr__(frozen, name, value)
