"""The configuration: ``conf/rag.properties`` overridden by ``DATAFARI_RAG_*`` environment variables.

:class:`Settings` is the single source, made of a dataclass per section (``solr.py``,
``embeddings.py``, ``agent.py``, ``server.py``, ``rag.py``, ``quality.py``, ``llm.py``,
``indexing.py``, ``security.py``, ``store.py``, ``guard.py``): every key has its default, its check
and its help line there, and ``conf/rag.properties`` and ``docs/configuration.md`` are generated
from them (``datafari-rag config write``; a test fails when they differ). Keys keep Datafari's
names where Datafari has them. ``loading.py`` reads and checks every value, naming the key that
holds a bad one; a key that names no setting is reported by name. A component is given its own
part (``Settings.part``), never the whole.
"""

from __future__ import annotations

from .keys import (
    AGENT,
    CONVERSATIONS,
    EMBED,
    EXTRACTIVE_MODEL,
    GEMINI_API,
    GUARD,
    INDEX,
    LLM,
    LOCAL,
    MAX_INSTRUCTIONS,
    QUALITY,
    RAG,
    SECURITY,
    SELF_QUERY_FIELDS,
    SERVER,
    SOLR,
    STORE,
    ConfigError,
)
from .loading import DEPRECATED, ENVIRONMENT, KEYS, RETIRED, checked, convert, env_name, load_settings, secret_key
from .settings import Settings

__all__ = [
    "AGENT",
    "CONVERSATIONS",
    "DEPRECATED",
    "EMBED",
    "ENVIRONMENT",
    "EXTRACTIVE_MODEL",
    "GEMINI_API",
    "GUARD",
    "INDEX",
    "KEYS",
    "LLM",
    "LOCAL",
    "MAX_INSTRUCTIONS",
    "QUALITY",
    "RAG",
    "RETIRED",
    "SECURITY",
    "SELF_QUERY_FIELDS",
    "SERVER",
    "SOLR",
    "STORE",
    "ConfigError",
    "Settings",
    "checked",
    "convert",
    "env_name",
    "load_settings",
    "secret_key",
]
