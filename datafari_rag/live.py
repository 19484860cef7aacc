"""The services of the current configuration: the process's settings, with the keys administrators
saved at run time and the default workflow's, rebuilt when those change — no restart.

Each worker asks the store at most every :attr:`LiveServices.REFRESH` seconds whether anything
changed (one small query); the worker that saved applies the change at once. While the store
cannot be reached, the last configuration read stays in use. Keys that shape the process
itself (Solr, the server, security, the store, the local runtime) are read at start only.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from .config import (
    AGENT,
    CONVERSATIONS,
    EMBED,
    INDEX,
    KEYS,
    LOCAL,
    SECURITY,
    SERVER,
    SOLR,
    STORE,
    ConfigError,
    Settings,
    checked,
    convert,
)
from .config.guard import FaqSettings
from .indexing.embedder import ChunkEmbedder
from .llm import LlmService
from .rag.faq import Faq
from .rag.pipeline import Pipeline
from .retrieval.rerank import build_reranker
from .services import Services, Stores, build_services
from .store import StoreUnavailable
from .workflows.spec import WorkflowError
from .workflows.store import StoredWorkflow

log = logging.getLogger(__name__)

AT_START = frozenset({SOLR, EMBED, AGENT, SERVER, SECURITY, LOCAL, STORE, CONVERSATIONS, INDEX})
MAX_WORKFLOW_PIPELINES = 32


def live_key(key: str) -> bool:
    """Whether ``key`` may change at run time (its section is not read at start only)."""
    return key in KEYS and KEYS[key].metadata["section"] not in AT_START


def with_overrides(base: Settings, values: dict[str, str]) -> Settings:
    """``base`` with saved keys (texts, as the file holds them), checked as the file's are.
    Keys no longer live (a section moved, a key renamed) are ignored."""
    changes = {KEYS[k].name: convert(k, v) for k, v in values.items() if live_key(k)}
    return checked(base.replace(**changes))


class LiveServices:
    REFRESH = 1.0  # seconds between two looks at the store

    def __init__(self, base: Settings, llm: LlmService | None = None) -> None:
        self.base = base
        self.llm = llm  # tests pass their own LLM; otherwise each configuration builds its client
        self.store = Stores(base)
        self.initial = build_services(base, llm, store=self.store)
        self._services = self.initial
        self._version: Any = None
        self._checked = -float("inf")
        self._lock = threading.Lock()
        self._pipelines: OrderedDict[tuple[Any, ...], Pipeline] = OrderedDict()

    def current(self) -> Services:
        if time.monotonic() - self._checked < self.REFRESH:
            return self._services
        with self._lock:
            if time.monotonic() - self._checked >= self.REFRESH:
                self._refresh()
        return self._services

    def last(self) -> Services:
        """The configuration requests last saw, without looking at the store (the health checks'
        thread: it must neither wait on the store nor log for it; requests refresh it)."""
        return self._services

    def changed(self) -> Services:
        """After a save in this process: the new configuration, now."""
        with self._lock:
            self._refresh()
        return self._services

    def _refresh(self) -> None:
        self._checked = time.monotonic()
        try:
            overrides, workflows = self.store.overrides(), self.store.workflows()
            version = (overrides.version(), workflows.default_version())
            if version == self._version:
                return
            settings = self.settings_of(overrides.values(), workflows.default())
            if settings != self._services.settings:  # nothing saved yet: the start's services stay
                self._services = build_services(settings, self.llm, store=self.store)
                self._pipelines.clear()
            self._version = version
        except StoreUnavailable as exc:
            log.warning("run-time settings not read (%s): the last ones stay in use", exc)
        except (ConfigError, WorkflowError) as exc:
            log.error("run-time settings refused (%s): the last ones stay in use", exc)

    def settings_of(self, overrides: dict[str, str], default: StoredWorkflow | None) -> Settings:
        """The process's settings with these saved keys, then the default workflow's."""
        settings = with_overrides(self.base, overrides)
        return default.spec.settings(settings) if default else settings

    def workflow_pipeline(self, workflow: StoredWorkflow) -> Pipeline:
        """The pipeline a workflow runs: the current settings with its keys, on its own collections
        when it has them (built once per version of the workflow and of the configuration)."""
        services = self.current()
        key = (workflow.version, id(services))
        with self._lock:
            found = self._pipelines.get(key)
            if found is not None:
                self._pipelines.move_to_end(key)
                return found
        settings = workflow.spec.settings(services.settings)
        p = services.pipeline
        main, vectors = services.collections(settings)
        faq = (
            Faq(settings.part(FaqSettings), p.faq.embed, main) if p.faq is not None else None
        )  # the workflow's own entries
        pipeline = Pipeline(
            settings,
            main,
            vectors,
            p.llm,
            None,
            p.guard,
            p.external_tools,
            build_reranker(settings, p.llm),
            faq,
            p.dedup_embed or _dedup_embed(settings),
            embed=p.embed,
        )
        with self._lock:
            self._pipelines[key] = pipeline
            while len(self._pipelines) > MAX_WORKFLOW_PIPELINES:
                self._pipelines.popitem(last=False)
        return pipeline


def _dedup_embed(settings: Settings) -> Callable[[list[str]], list[list[float]]] | None:
    """The embedding service for a workflow that asks for semantic deduplication itself."""
    if settings.context_dedup and settings.context_dedup_method == "embedding":
        return ChunkEmbedder(settings, settings.context_dedup_model_name).embed
    return None
