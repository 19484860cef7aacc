"""The whole configuration: one frozen :class:`Settings`, made of each section's settings (a
module per section of ``docs/configuration.md``), with what is derived from several sections."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, TypeVar

from .agent import AgentSettings
from .embeddings import EmbeddingSettings
from .guard import FaqSettings, GuardSettings
from .indexing import IndexingSettings
from .keys import EXTRACTIVE_MODEL, GEMINI_API
from .llm import LlmSettings
from .quality import QualitySettings
from .rag import CacheSettings, RagSettings
from .security import SecuritySettings
from .server import ServerSettings
from .solr import LocalSolrSettings, SolrSettings
from .store import ConversationSettings, StoreSettings

Part = TypeVar("Part")


# the sections in the order of docs/configuration.md: a dataclass takes its bases' fields from the
# last base to the first
@dataclass(frozen=True)
class Settings(
    LocalSolrSettings,
    GuardSettings,
    FaqSettings,
    ConversationSettings,
    StoreSettings,
    SecuritySettings,
    IndexingSettings,
    LlmSettings,
    QualitySettings,
    CacheSettings,
    RagSettings,
    ServerSettings,
    AgentSettings,
    EmbeddingSettings,
    SolrSettings,
):
    """Every setting, each read once from ``conf/rag.properties`` and the environment (``loading.py``)."""

    @property
    def agent_url(self) -> str:
        """The base URL that Solr's model calls: OpenAI-compatible (…/v1), or Gemini's (…/v1beta)."""
        if self.embeddings_service == "gemini":
            return self.embeddings_endpoint or GEMINI_API
        return self.embeddings_endpoint or f"http://{self.agent_host}:{self.agent_port}/v1"

    @property
    def llm_url(self) -> str:
        """The LLM's OpenAI-compatible base URL (a full ``…/chat/completions`` URL, as Datafari 6.1
        wrote it, loses its path: the client adds it); empty ``ai.api.endpoint``: the local agent."""
        endpoint = self.llm_endpoint.rstrip("/").removesuffix("/chat/completions")
        return endpoint or f"http://{self.agent_host}:{self.agent_port}/v1"

    @property
    def graceful_seconds(self) -> float:
        """How long a stopping sidecar waits for its answers under way (``server.gracefulTimeout``):
        by default past an answer's own deadline, so that none is cut without its last event."""
        return self.server_graceful_timeout or self.llm_deadline + 15

    @property
    def relevance_weighed(self) -> bool:
        """Whether the answers' confidence weighs their relevance (``rag.confidence.relevance``).
        ``auto``: only for the local extractive generator, whose answers the relevance was fitted on
        (whole sentences of the sources); an LLM's concise answer ("Victor Hugo [1].") is far from
        its question in embedding space and would be taken for a wrong one."""
        if self.confidence_relevance != "auto":
            return self.confidence_relevance == "true"
        return self.llm_model == EXTRACTIVE_MODEL and self.agent_generator == "extractive"

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def part(self, section: type[Part]) -> Part:
        """Only ``section``'s settings (a section's class, or a component's parameters with an
        ``of(settings)``): what a component is given, so that it reads nothing else."""
        names = {f.name for f in dataclasses.fields(section)}  # type: ignore[arg-type]
        return section(**{name: getattr(self, name) for name in names})
