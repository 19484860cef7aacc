"""What a process shares, built once: the settings, the Solr client, both collections, the LLM,
the RAG pipeline and the indexer. The app keeps one in ``app.extensions``; the CLI builds its own."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .alerts.store import Alerts, SavedSearches
from .config import Settings
from .config.guard import FaqSettings, GuardSettings
from .config.rag import CacheSettings
from .conversations import ConversationStore
from .conversations.basket import Basket
from .conversations.feedback import FeedbackStore
from .indexing.embedder import ChunkEmbedder
from .indexing.indexer import Indexer
from .indexing.jobs import JobStore
from .llm import LlmService, OpenAiLlmService
from .llm.anthropic_service import AnthropicLlmService
from .llm.datafari_service import DatafariLlmService
from .llm.fallback import with_fallbacks
from .llm.gemini_service import GeminiLlmService
from .llm.params import LlmParams
from .paths import var_dir
from .rag.assembly import token_counter
from .rag.faq import Faq
from .rag.mcp_tools import ExternalTools
from .rag.pipeline import Pipeline
from .rag.topic_guard import TopicGuard
from .retrieval.cache import SemanticCache
from .retrieval.rerank import build_reranker
from .solr import SolrClient
from .solr.breaker import CircuitBreaker
from .solr.collection import Collection
from .solr.service_account import credentials
from .store import StoreHandle
from .workflows.store import WorkflowStore


class Stores(StoreHandle):
    """The process's relational store with the stores of the features (conversations, workflows,
    index jobs) beside those every feature shares, all on its one engine."""

    def conversations(self) -> ConversationStore:
        """Each user's conversations and their turns."""
        s = self.settings
        return self.part(ConversationStore, s.conversations_max_per_user, s.conversations_max_turns)

    def basket(self) -> Basket:
        """The documents baskets of the conversations (Datafari 7.0's assistant)."""
        return self.part(Basket)

    def feedback(self) -> FeedbackStore:
        """Users' ratings of answers."""
        return self.part(FeedbackStore)

    def workflows(self) -> WorkflowStore:
        """The workflows and their API keys."""
        return self.sealed_part(WorkflowStore)

    def jobs(self) -> JobStore:
        """The indexing jobs' progress."""
        return self.part(JobStore)

    def saved_searches(self) -> SavedSearches:
        """Each user's saved searches (DatafariUI)."""
        return self.part(SavedSearches)

    def alerts(self) -> Alerts:
        """Each user's alerts and their runs (DatafariUI)."""
        return self.part(Alerts)


@dataclass
class Services:
    settings: Settings
    solr: SolrClient
    main: Collection  # FileShare
    vectors: Collection  # VectorMain
    llm: LlmService
    pipeline: Pipeline
    indexer: Indexer
    store: Stores

    def collections(self, settings: Settings) -> tuple[Collection, Collection]:
        """The collections ``settings`` name (a workflow's own, or these services' own)."""
        if (settings.collection_main, settings.collection_vector) == (self.main.name, self.vectors.name):
            return self.main, self.vectors
        return Collection(self.solr, settings.collection_main), Collection(self.solr, settings.collection_vector)

    def indexer_with(self, settings: Settings) -> Indexer:
        """An indexer writing where and cutting as ``settings`` say (a workflow's collections and chunker)."""
        main, vectors = self.collections(settings)
        return Indexer.of(self.solr, settings, self.llm, main, vectors)

    def indexer_of(self, workflow_id: str | None) -> Indexer:
        """The indexer of a job: the configuration's, or one cutting with the workflow's chunker
        (:class:`~.config.ConfigError` when the workflow cannot index, the store's errors when it
        is not found)."""
        if workflow_id is None:
            return self.indexer
        workflow = self.store.workflows().get(workflow_id)
        return self.indexer_with(workflow.spec.settings(self.settings, indexing=True))


def solr_client(settings: Settings) -> SolrClient:
    """The process's Solr client, with its circuit breaker: a Solr that stops answering costs the
    requests milliseconds, not the whole Solr timeout each."""
    auth = credentials(settings)
    breaker = CircuitBreaker(settings.solr_circuit_failures, settings.solr_circuit_cooldown)
    return SolrClient(settings.solr_url, settings.solr_timeout, auth, breaker)


def semantic_cache(settings: Settings, embedder: ChunkEmbedder, main: Collection, vectors: Collection) -> SemanticCache:
    """The process's cache of retrieval results: queries compared with ``cache.modelName``'s
    embeddings, the collections' versions as its validity."""
    return SemanticCache(
        settings.part(CacheSettings),
        lambda query: embedder.embed([query])[0],
        lambda: (main.version(), vectors.version()),
    )


def topic_guard(settings: Settings, embedder: ChunkEmbedder, llm: LlmService) -> TopicGuard:
    """The forbidden-topic guard: questions and topics compared with ``forbidden.modelName``'s
    embeddings, its refusals written to ``forbidden.auditFile``."""
    audit = Path(settings.guard_audit_file) if settings.guard_audit_file else var_dir() / "log" / "guard-audit.jsonl"
    return TopicGuard(settings.part(GuardSettings), embedder.embed, llm, audit)


# ai.llm.service's implementations (registry.LLM_SERVICES names them)
LLM_BUILDERS: dict[str, Callable[[LlmParams], LlmService]] = {
    "openai": OpenAiLlmService,
    "datafari": OpenAiLlmService,
    "anthropic": AnthropicLlmService,
    "gemini": GeminiLlmService,
}


def llm_service(settings: Settings) -> LlmService:
    """The LLM: Datafari 6.1's External LLM service with ``rag.template=datafari`` (its own
    protocol), else ``ai.llm.service``'s, with ``llm.fallbackModels`` after ``llm.model``."""
    params = LlmParams.of(settings)
    if settings.rag_template == "datafari":
        return DatafariLlmService(params)
    build = LLM_BUILDERS[settings.llm_service]
    fallbacks = [m.strip() for m in settings.llm_fallback_models.split(",") if m.strip()]
    return with_fallbacks(lambda model: build(params.with_model(model)), settings.llm_model, fallbacks)


def build_services(settings: Settings, llm: LlmService | None = None, store: Stores | None = None) -> Services:
    solr = solr_client(settings)
    main = Collection(solr, settings.collection_main)
    vectors = Collection(solr, settings.collection_vector)
    if llm is None:
        llm = llm_service(settings)
    embedders: dict[str, ChunkEmbedder] = {}  # one client per model, shared by the cache and the guard

    def embedder(model: str) -> ChunkEmbedder:
        return embedders.setdefault(model, ChunkEmbedder(settings, model))

    cache = (
        semantic_cache(settings, embedder(settings.cache_model_name), main, vectors) if settings.cache_enabled else None
    )
    guard = topic_guard(settings, embedder(settings.guard_model_name), llm) if settings.guard_enabled else None
    faq = (
        Faq(settings.part(FaqSettings), embedder(settings.faq_model_name).embed, main) if settings.faq_enabled else None
    )
    semantic = settings.context_dedup and settings.context_dedup_method == "embedding"
    dedup_embed = embedder(settings.context_dedup_model_name).embed if semantic else None
    external_tools = ExternalTools(settings) if settings.agentic_mcp_servers else None
    reranker = build_reranker(settings, llm)
    if settings.context_max_tokens:
        token_counter(settings.context_tokenizer)  # a tokenizer that cannot be read stops the start
    return Services(
        settings=settings,
        solr=solr,
        main=main,
        vectors=vectors,
        llm=llm,
        pipeline=Pipeline(
            settings,
            main,
            vectors,
            llm,
            cache,
            guard,
            external_tools,
            reranker,
            faq,
            dedup_embed,
            embed=ChunkEmbedder(settings).embed,  # the chunks' own model: the in-memory mode's
        ),
        indexer=Indexer.of(solr, settings, llm, main, vectors),
        store=store or Stores(settings),
    )
