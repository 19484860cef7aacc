"""The configuration is a module per section, and each component is given its own part of it."""

from __future__ import annotations

import dataclasses
import importlib
import typing
from pathlib import Path

import datafari_rag.config as config
from datafari_rag.config import KEYS, Settings
from datafari_rag.config.guard import FaqSettings, GuardSettings
from datafari_rag.config.indexing import IndexingSettings
from datafari_rag.config.rag import CacheSettings
from datafari_rag.indexing.callbacks import post_progress
from datafari_rag.indexing.chunkers import chunk_document
from datafari_rag.indexing.indexer import Indexer, IndexerParams
from datafari_rag.llm import OpenAiLlmService
from datafari_rag.llm.anthropic_service import AnthropicLlmService
from datafari_rag.llm.datafari_service import DatafariLlmService
from datafari_rag.llm.gemini_service import GeminiLlmService
from datafari_rag.llm.params import LlmParams
from datafari_rag.rag.faq import Faq
from datafari_rag.rag.topic_guard import TopicGuard
from datafari_rag.retrieval.cache import SemanticCache

SECTION_MODULES = sorted(
    p.stem
    for p in Path(config.__file__).parent.glob("*.py")
    if p.stem not in ("__init__", "keys", "loading", "settings")
)


def _sections() -> list[type]:
    found = []
    for name in SECTION_MODULES:
        module = importlib.import_module(f"datafari_rag.config.{name}")
        found += [c for c in vars(module).values() if dataclasses.is_dataclass(c) and c.__module__ == module.__name__]
    return found


def test_every_setting_is_declared_in_exactly_one_section_module_of_its_own_section() -> None:
    declared: list[str] = []
    for section in _sections():
        own = [f for f in dataclasses.fields(section) if f.name in vars(section)["__dataclass_fields__"]]
        titles = {f.metadata["section"] for f in own}
        assert len(titles) == 1, f"{section.__name__} mixes sections {titles}"
        declared += [f.metadata["key"] for f in own]
    assert sorted(declared) == sorted(KEYS) and len(declared) == len(set(declared)) == len(KEYS)


def test_a_part_holds_its_section_only_with_the_configured_values() -> None:
    settings = Settings(guard_enabled=True, guard_topics="salary", faq_threshold=0.7, cache_ttl=60.0)
    guard = settings.part(GuardSettings)
    assert type(guard) is GuardSettings and guard.guard_topics == "salary"
    assert not hasattr(guard, "faq_threshold") and not hasattr(guard, "solr_url")
    assert settings.part(FaqSettings).faq_threshold == 0.7 and settings.part(CacheSettings).cache_ttl == 60.0


def _parameter(function: typing.Callable[..., object], name: str) -> object:
    return typing.get_type_hints(function)[name]


def test_each_component_is_given_its_own_part_never_the_whole_settings() -> None:
    assert _parameter(TopicGuard.__init__, "settings") is GuardSettings
    assert _parameter(Faq.__init__, "settings") is FaqSettings
    assert _parameter(SemanticCache.__init__, "settings") is CacheSettings
    for service in (OpenAiLlmService, AnthropicLlmService, GeminiLlmService, DatafariLlmService):
        assert _parameter(service.__init__, "params") is LlmParams, service
    assert _parameter(Indexer.__init__, "params") is IndexerParams
    assert _parameter(chunk_document, "settings") is IndexingSettings
    assert _parameter(post_progress, "settings") is IndexingSettings
    params = IndexerParams.of(Settings(vector_chunker="semantic", vector_chunk_unit="characters"))
    assert type(params.indexing) is IndexingSettings and params.indexing.vector_chunker == "semantic"
    assert LlmParams.of(Settings(llm_model="mistral")).with_model("qwen").model == "qwen"
