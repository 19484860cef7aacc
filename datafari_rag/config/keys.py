"""What every setting is made of: its key, section, default, help line and bounds (:func:`key`),
and the error a value that cannot be used raises."""

from __future__ import annotations

from dataclasses import field
from typing import Any

ENV_PREFIX = "DATAFARI_RAG_"
MAX_INSTRUCTIONS = 4000


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the key."""


def key(
    section: str,
    name: str,
    default: Any,
    help: str,
    choices: tuple[str, ...] = (),
    minimum: float = 0,
    maximum: float | None = None,
) -> Any:
    """A setting: a dataclass field whose metadata the loader, the checks and the generated
    ``conf/rag.properties`` and ``docs/configuration.md`` read."""
    meta = {"key": name, "section": section, "help": help, "choices": choices, "minimum": minimum, "maximum": maximum}
    return field(default=default, metadata=meta)


SOLR, EMBED, AGENT, SERVER, RAG, QUALITY, LLM, INDEX, SECURITY, LOCAL, STORE, CONVERSATIONS, GUARD = (
    "Solr",
    "Embeddings (Solr's text-to-vector model)",
    "Local AI agent",
    "Sidecar HTTP server",
    "RAG (Datafari's keys and defaults)",
    "Retrieval and answer quality: reranking, query enhancement, context assembly",
    "LLM client",
    "Indexing: chunk-and-embed into VectorMain (Datafari's vector.* keys)",
    "Security: who the user is, which tokens they hold",
    "Local Solr runtime (datafari-rag solr start)",
    "The store: one database for users, conversations, workflows and their keys, index jobs, alerts",
    "Conversations kept on the server",
    "Forbidden-topic guard",
)
# the model name of the local agent's extractive generator (llm.model's default)
EXTRACTIVE_MODEL = "datafari-rag-extractive"
# what self-querying may filter on: the fields of filters.py (not id) and the date field
SELF_QUERY_FIELDS = ("source", "repo_source", "extension", "language", "author", "type_category", "last_modified")
SPLITTERS = ("recursiveSplitter", "paragraphSplitter", "sentenceSplitter", "lineSplitter", "characterSplitter")
GEMINI_API = "https://generativelanguage.googleapis.com/v1beta"
