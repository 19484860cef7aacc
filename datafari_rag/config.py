"""Settings from ``conf/rag.properties``, overridden by ``DATAFARI_RAG_*`` environment variables.

Keys keep Datafari's names where Datafari has them. Every value is validated when the
settings are loaded, and a bad one is reported with the key that holds it.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import javaproperties

from .paths import CONF

ENV_PREFIX = "DATAFARI_RAG_"


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the key."""


def _key(name: str, default: Any, choices: tuple[str, ...] = (), minimum: float = 0) -> Any:
    return field(default=default, metadata={"key": name, "choices": choices, "minimum": minimum})


@dataclass(frozen=True)
class Settings:
    solr_url: str = _key("solr.url", default="http://127.0.0.1:8983/solr")
    collection_main: str = _key("solr.collection.main", default="FileShare")
    collection_vector: str = _key("solr.collection.vector", default="VectorMain")
    solr_username: str = _key("solr.username", default="")
    solr_password: str = _key("solr.password", default="")
    solr_timeout: float = _key("solr.timeout", default=30.0)
    embeddings_model: str = _key("solr.embeddings.model", default="default_model")
    vector_field: str = _key("solr.vector.field", default="vector_384")
    embeddings_endpoint: str = _key("solr.embeddings.endpoint", default="")
    agent_host: str = _key("agent.host", default="127.0.0.1")
    agent_port: int = _key("agent.port", default=8889)
    agent_generator: str = _key("agent.generator", default="extractive", choices=("extractive", "gguf"))
    agent_gguf_path: str = _key("agent.gguf.path", default="")
    server_host: str = _key("server.host", default="127.0.0.1")
    server_port: int = _key("server.port", default=8080)
    api_prefix: str = _key("server.api.prefix", default="/Datafari/rest/v2.0")
    # Send Datafari's error code as the HTTP status too (Datafari itself always answers 200).
    errors_as_http_status: bool = _key("server.errors.httpStatus", default=False)

    # --- RAG (Datafari 6.2 keys and defaults) ---
    enable_rag: bool = _key("ai.enable.rag", default=True)
    enable_summarization: bool = _key("ai.enable.summarization", default=True)
    llm_endpoint: str = _key("ai.api.endpoint", default="")
    llm_token: str = _key("ai.api.token", default="")
    llm_service: str = _key("ai.llm.service", default="openai", choices=("openai", "datafari"))
    llm_model: str = _key("llm.model", default="datafari-rag-extractive")
    llm_temperature: float = _key("llm.temperature", default=0.0)
    llm_max_tokens: int = _key("llm.maxTokens", default=200)
    retrieval_method: str = _key("retrieval.method", default="", choices=("", "bm25", "vector", "rrf"))
    legacy_vector_search: bool = _key("solr.enable.vector.search", default=False)
    max_files: int = _key("chunking.maxFiles", default=3, minimum=1)
    chunk_size: int = _key("chunking.chunk.size", default=3000, minimum=100)
    rag_operator: str = _key("rag.operator", default="OR", choices=("OR", "AND"))
    rrf_top_k: int = _key("rrf.topK", default=50, minimum=1)
    rrf_rank_constant: int = _key("rrf.rank.constant", default=60, minimum=1)
    chunking_strategy: str = _key("prompt.chunking.strategy", default="refine", choices=("refine", "mapreduce"))
    max_request_size: int = _key("prompt.max.request.size", default=40000, minimum=1000)
    chat_memory_enabled: bool = _key("chat.memory.enabled", default=False)
    chat_history_size: int = _key("chat.memory.history.size", default=6)
    rewriting_bm25: bool = _key("chat.query.rewriting.enabled.bm25", default=False)
    rewriting_vector: bool = _key("chat.query.rewriting.enabled.vector", default=False)
    solr_top_k: int = _key("solr.topK", default=10, minimum=1)
    # --- indexing: chunk-and-embed into VectorMain (Datafari's vector.* keys) ---
    vector_enabled: bool = _key("vector.enabled", default=True)
    vector_chunk_size: int = _key("vector.chunksize", default=300, minimum=10)
    vector_max_overlap: int = _key("vector.maxoverlap", default=0)
    vector_splitter: str = _key(
        "vector.splitter",
        default="recursiveSplitter",
        choices=("recursiveSplitter", "paragraphSplitter", "sentenceSplitter", "lineSplitter", "characterSplitter"),
    )
    vector_chunk_unit: str = _key("vector.chunksize.unit", default="tokens", choices=("tokens", "characters"))
    vector_min_chunk_length: int = _key("vector.filter.minchunklength", default=10)
    vector_min_alnum_ratio: float = _key("vector.filter.minalphanumratio", default=0.3)
    vector_embedding_mode: str = _key("vector.embedding.mode", default="solr", choices=("solr", "sidecar"))
    vector_embedding_batch: int = _key("vector.embedding.batch", default=32, minimum=1)
    # --- security: identity, tokens ---
    anonymous_allowed: bool = _key("security.anonymous.allowed", default=True)
    jwt_hs256_secret: str = _key("security.jwt.hs256.secret", default="")
    jwt_public_key_file: str = _key("security.jwt.publicKeyFile", default="")
    jwt_jwks_file: str = _key("security.jwt.jwksFile", default="")
    jwt_algorithms: str = _key("security.jwt.algorithms", default="RS256,ES256")
    jwt_issuer: str = _key("security.jwt.issuer", default="")
    jwt_audience: str = _key("security.jwt.audience", default="")
    jwt_username_claim: str = _key("security.jwt.usernameClaim", default="preferred_username")
    jwt_groups_claim: str = _key("security.jwt.groupsClaim", default="")
    trusted_header: str = _key("security.trustedHeader", default="")
    trusted_proxies: str = _key("security.trustedProxies", default="")
    strip_domain: bool = _key("security.username.stripDomain", default=True)
    append_domain: str = _key("security.username.appendDomain", default="")
    authority_url: str = _key("security.authority.url", default="")
    authority_timeout: float = _key("security.authority.timeout", default=5.0, minimum=0.1)
    authority_cache_ttl: float = _key("security.authority.cacheTtl", default=60.0)
    mapping_file: str = _key("security.mappingFile", default="conf/acl-mapping.json")
    groups_as_tokens: bool = _key("security.groups.asTokens", default=False)
    update_users: str = _key("security.update.users", default="")
    # --- ours ---
    llm_timeout: float = _key("llm.timeout", default=60.0, minimum=1)
    llm_max_retries: int = _key("llm.maxRetries", default=1)
    llm_max_concurrent: int = _key("llm.maxConcurrent", default=64, minimum=1)
    query_max_length: int = _key("rag.query.maxLength", default=2000, minimum=10)

    @property
    def agent_url(self) -> str:
        """The OpenAI-compatible base URL (…/v1) that Solr's model calls."""
        return self.embeddings_endpoint or f"http://{self.agent_host}:{self.agent_port}/v1"

    @property
    def llm_url(self) -> str:
        """The LLM's OpenAI-compatible base URL; empty ``ai.api.endpoint`` means the local agent."""
        return self.llm_endpoint or f"http://{self.agent_host}:{self.agent_port}/v1"

    @property
    def retrieval(self) -> str:
        """``retrieval.method``, else the legacy ``solr.enable.vector.search`` (vector), else bm25."""
        return self.retrieval_method or ("vector" if self.legacy_vector_search else "bm25")

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


def _convert(f: dataclasses.Field[Any], raw: str, kind: type) -> Any:
    key, choices, minimum = f.metadata["key"], f.metadata["choices"], f.metadata["minimum"]
    raw = raw.strip()
    if choices:
        if raw not in choices:
            shown = ", ".join(c or "(empty)" for c in choices)
            raise ConfigError(f"{key}: {raw!r} is not one of {shown}")
        return raw
    try:
        if kind is bool:
            if raw.lower() not in ("true", "false"):
                raise ValueError("expected true or false")
            return raw.lower() == "true"
        value = kind(raw)
    except ValueError as exc:
        raise ConfigError(f"{key}: {raw!r} is not a valid {kind.__name__} ({exc})") from None
    if kind in (int, float) and value < minimum:
        raise ConfigError(f"{key}: {raw!r} must be at least {minimum:g}")
    return value


def load_settings(path: Path | None = None, env: dict[str, str] | None = None) -> Settings:
    """Reads the properties file (if present) and the environment; validates every key."""
    env = os.environ if env is None else env
    path = path or Path(env.get(ENV_PREFIX + "CONFIG", CONF / "rag.properties"))
    props: dict[str, str] = {}
    if path.exists():
        with path.open(encoding="utf-8") as fh:
            props = javaproperties.load(fh)
    types = {"str": str, "int": int, "float": float, "bool": bool}
    values: dict[str, Any] = {}
    for f in dataclasses.fields(Settings):
        key = f.metadata["key"]
        env_name = ENV_PREFIX + key.upper().replace(".", "_")
        raw = env.get(env_name, props.get(key))
        if raw is None:
            continue
        values[f.name] = _convert(f, raw, types[f.type] if isinstance(f.type, str) else f.type)
    settings = Settings(**values)
    if not settings.solr_url.startswith(("http://", "https://")):
        raise ConfigError(f"solr.url: {settings.solr_url!r} must be an http(s) URL")
    return settings
