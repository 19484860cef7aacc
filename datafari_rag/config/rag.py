"""Datafari's RAG keys and defaults: what ai/rag searches, the LLM it calls, the cache, agentic mode, chat memory."""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import LLM_SERVICES, RETRIEVAL_MODES
from .keys import EXTRACTIVE_MODEL, RAG, key


@dataclass(frozen=True)
class RagSettings:
    """Datafari's RAG keys (ai.*, rag.*, llm.*, chunking.*, cache.*, agentic.*, chat.*)."""

    enable_rag: bool = key(
        RAG, "ai.enable.rag", True, "RAG answers (ai/rag, ai/stream, search/select?action=rag) on or off."
    )
    enable_summarization: bool = key(RAG, "ai.enable.summarization", True, "ai/summarize on or off.")
    rag_enable_logs: bool = key(
        RAG,
        "rag.enable.logs",
        False,
        "Log each RAG question at INFO, as Datafari 6.1 did; off: questions are not logged.",
    )
    llm_endpoint: str = key(
        RAG,
        "ai.api.endpoint",
        "",
        "OpenAI-compatible LLM base URL (…/v1), or its full …/v1/chat/completions URL as Datafari 6.1's "
        "files give it; empty: the local agent, which needs no API key.",
    )
    llm_token: str = key(RAG, "ai.api.token", "", "The LLM's API key.")
    llm_service: str = key(
        RAG,
        "ai.llm.service",
        "openai",
        "The LLM's API: " + LLM_SERVICES.help() + ". ai.api.endpoint is its base URL (empty: the "
        "vendor's own for anthropic and gemini), ai.api.token its key.",
        choices=LLM_SERVICES.names,
    )
    llm_model: str = key(RAG, "llm.model", EXTRACTIVE_MODEL, "Model name sent to the LLM.")
    rag_template: str = key(
        RAG,
        "rag.template",
        "openai",
        "The LLM's protocol: openai (chat completions under ai.api.endpoint), or datafari (Datafari 6.1's "
        'External LLM service at ai.api.endpoint: {"input": {context, question, max_tokens, temperature}} '
        '-> {"output"}).',
        choices=("openai", "datafari"),
    )
    llm_temperature: float = key(
        RAG, "llm.temperature", 0.0, "Sampling temperature (0 to 2, OpenAI's range).", minimum=0, maximum=2
    )
    llm_max_tokens: int = key(RAG, "llm.maxTokens", 200, "Longest answer, in tokens.")
    retrieval_method: str = key(
        RAG,
        "retrieval.method",
        "",
        RETRIEVAL_MODES.help()
        + "; empty: vector if solr.enable.vector.search, else memory if rag.enable.vector.search, else bm25.",
        choices=("", *RETRIEVAL_MODES.names),
    )
    legacy_vector_search: bool = key(
        RAG,
        "solr.enable.vector.search",
        False,
        "Datafari 6.1's switch to vector retrieval, used when retrieval.method is empty.",
    )
    in_memory_vector_search: bool = key(
        RAG,
        "rag.enable.vector.search",
        False,
        "Datafari 6.2's in-memory vector search (retrieval.method=memory), used when retrieval.method is empty "
        "and solr.enable.vector.search is false.",
    )
    in_memory_max_chunks: int = key(
        RAG, "inMemory.maxChunks", 10, "memory: the chunks the in-memory vector search keeps.", minimum=1, maximum=200
    )
    max_files: int = key(RAG, "chunking.maxFiles", 3, "BM25: how many documents are sent.", minimum=1)
    chunk_size: int = key(
        RAG, "chunking.chunk.size", 3000, "Query-time chunks of at most this many characters.", minimum=100
    )
    chunking_enabled: bool = key(
        RAG,
        "chunking.enable",
        True,
        "Cut the retrieved text into chunks of chunking.chunk.size; false: each retrieved text goes whole "
        "(cut only if it alone is over prompt.max.request.size).",
    )
    rag_operator: str = key(RAG, "rag.operator", "OR", "q.op of BM25 retrieval.", choices=("OR", "AND"))
    rag_solr_field: str = key(
        RAG,
        "rag.solrField",
        "exactContent",
        "BM25 retrieval: a document's text for the LLM: exactContent (all of it), preview_content, or "
        "highlighting (the passage that best matches the query, rag.hl.fragsize characters).",
        choices=("exactContent", "preview_content", "highlighting"),
    )
    rag_hl_fragsize: int = key(
        RAG,
        "rag.hl.fragsize",
        500,
        "With rag.solrField=highlighting: the passage's size in characters; 0: the whole field (Solr's "
        "hl.fragsize=0, as Datafari 6.1 documents it).",
        minimum=0,
    )
    rag_add_instructions: bool = key(
        RAG,
        "rag.addInstructions",
        True,
        "rag.template=datafari: the product's instructions open the context sent to the service, as in "
        "Datafari 6.1; false: the context is the documents alone (the service has its own instructions).",
    )
    prompt_layout: str = key(
        RAG,
        "prompt.layout",
        "one-message",
        "How an answer's prompt is laid out: one-message (the instructions as the system message, then "
        "the documents and the question in one user message, as Datafari 6.2) or message-per-document "
        "(Datafari 6.1: the instructions, one user message per document, then one with the question).",
        choices=("one-message", "message-per-document"),
    )
    rrf_top_k: int = key(RAG, "rrf.topK", 50, "Hybrid: depth of each ranked list.", minimum=1)
    rrf_rank_constant: int = key(RAG, "rrf.rank.constant", 60, "Hybrid: the k of reciprocal rank fusion.", minimum=1)
    hybrid_fusion: str = key(
        RAG,
        "hybrid.fusion",
        "normalized",
        "Hybrid: how BM25 and kNN are fused: normalized (each list's scores scaled to 0-1, then a weighted sum; "
        "nDCG@10 0.727 on SciFact) or rrf (weighted reciprocal rank; 0.713).",
        choices=("rrf", "normalized"),
    )
    rrf_weight_bm25: float = key(RAG, "rrf.weight.bm25", 1.0, "Hybrid: the weight of the BM25 list.")
    rrf_weight_vector: float = key(RAG, "rrf.weight.vector", 1.0, "Hybrid: the weight of the kNN list.")
    rrf_weight_bm25_fr: float = key(
        RAG, "rrf.weight.bm25.fr", 1.0, "Hybrid, for a question in French: the weight of the BM25 list."
    )
    rrf_weight_vector_fr: float = key(
        RAG,
        "rrf.weight.vector.fr",
        0.25,
        "Hybrid, for a question in French: the weight of the kNN list (low: the English embedding model is weak "
        "in French).",
    )
    chunking_strategy: str = key(
        RAG,
        "prompt.chunking.strategy",
        "refine",
        "How several packs of snippets become one answer.",
        choices=("refine", "mapreduce"),
    )
    max_request_size: int = key(
        RAG, "prompt.max.request.size", 40000, "Size limit of one whole LLM prompt, in characters.", minimum=1000
    )
    prompt_cleaning: str = key(
        RAG,
        "prompt.cleaning",
        "strict",
        "How the question and the documents' text are cleaned before they enter a prompt: strict (the "
        "product's: markup neutralised, accents kept) or datafari (Datafari 6.2's sanitizeInput and "
        "cleanContext, rule for rule; documents keep < and >).",
        choices=("strict", "datafari"),
    )
    strip_accents: bool = key(
        RAG,
        "prompt.stripAccents",
        False,
        "Remove accents from the question, the history and the documents' text before they enter a prompt "
        "(searches keep them); off by default, so French keeps its accents.",
    )
    chat_memory_enabled: bool = key(
        RAG, "chat.memory.enabled", False, "The conversation's last messages go into the prompts."
    )
    chat_history_size: int = key(RAG, "chat.memory.history.size", 6, "How many messages of history.")
    chat_history_block_classes: str = key(
        RAG,
        "chat.history.blockClasses",
        "",
        "The block classes of a client's history messages that reach a prompt, comma-separated (a message "
        "without one is text; empty: every class). See docs/conversations.md.",
    )
    chat_history_tool_results: int = key(
        RAG,
        "chat.history.toolResults",
        0,
        "How many of a client's history's last tool results reach a prompt (tool calls alone never do).",
        maximum=20,
    )
    chat_collection_aliases: str = key(
        RAG,
        "chat.collectionAliases",
        "",
        "Other names (comma-separated) a chat-core request's collection_name may give the collection "
        "searched; its own name, or the part before _FileShare, is always accepted.",
    )
    rewriting_bm25: bool = key(
        RAG,
        "chat.query.rewriting.enabled.bm25",
        False,
        "BM25: the LLM rewrites the search query (keywords in English), from the history if there is one.",
    )
    rewriting_vector: bool = key(
        RAG,
        "chat.query.rewriting.enabled.vector",
        False,
        "vector and rrf: the LLM rewrites the search query as a standalone question, from the history if any.",
    )
    sub_queries: int = key(
        RAG,
        "chat.query.rewriting.subQueries",
        0,
        "With a conversation: the LLM rewrites the last message, from the last 4 exchanges, into a standalone "
        "question or up to this many sub-queries (JSON), each retrieved and the results fused by RRF; "
        "greetings and closings skip it, a failure keeps the message. 0: off (Datafari's rewriting only).",
        minimum=0,
    )
    agentic_enabled: bool = key(
        RAG,
        "agentic.enabled",
        True,
        "The agentic mode (search_type=agentic, POST ai action=agentic): the LLM answers through tools "
        "(it must support OpenAI's tool calls).",
    )
    agentic_max_steps: int = key(RAG, "agentic.maxSteps", 5, "Agentic mode: model turns at most.", minimum=1)
    agentic_max_tool_calls: int = key(
        RAG, "agentic.maxToolCalls", 8, "Agentic mode: tool calls at most, in all.", minimum=1
    )
    agentic_deadline: float = key(
        RAG, "agentic.deadline", 60.0, "Agentic mode: seconds before the model must answer without tools.", minimum=1
    )
    agentic_mcp_servers: str = key(
        RAG,
        "agentic.mcp.servers",
        "",
        "Agentic mode: external MCP servers whose tools the model may call, comma-separated name=url "
        "(streamable HTTP). Their results are not filtered by the product's ACLs.",
    )
    agentic_mcp_authorization: str = key(
        RAG, "agentic.mcp.authorization", "", "Agentic mode: the Authorization header sent to those MCP servers."
    )
    solr_top_k: int = key(RAG, "solr.topK", 10, "Vector and hybrid retrieval: how many chunks.", minimum=1)
    query_max_length: int = key(
        RAG, "rag.query.maxLength", 2000, "Longest accepted query, in characters (longer: ragBadRequest).", minimum=10
    )

    @property
    def retrieval(self) -> str:
        """``retrieval.method``, else the legacy ``solr.enable.vector.search`` (vector), else 6.2's
        ``rag.enable.vector.search`` (memory), else bm25."""
        if self.retrieval_method:
            return self.retrieval_method
        return "vector" if self.legacy_vector_search else "memory" if self.in_memory_vector_search else "bm25"


@dataclass(frozen=True)
class CacheSettings:
    """The semantic cache of answers' retrieval (cache.*)."""

    cache_enabled: bool = key(
        RAG,
        "cache.enabled",
        False,
        "Semantic cache of retrieval results: a query whose embedding is close enough to a recent one of a "
        "user with exactly the same access, settings and index reuses its results.",
    )
    cache_threshold: float = key(RAG, "cache.threshold", 0.95, "Cache: the cosine similarity a hit needs.")
    cache_model_name: str = key(
        RAG,
        "cache.modelName",
        "all-MiniLM-L6-v2",
        "Cache: the model of the embedding service (solr.embeddings.*) that compares queries; cache.threshold "
        "is calibrated for all-MiniLM-L6-v2.",
    )
    cache_ttl: float = key(RAG, "cache.ttl", 900.0, "Cache: seconds an entry lives.", minimum=1)
    cache_max_entries: int = key(RAG, "cache.maxEntries", 1000, "Cache: entries kept (oldest out).", minimum=1)
    cache_version_check: float = key(
        RAG,
        "cache.versionCheck",
        1.0,
        "Cache: seconds between two checks of the collections' versions (a change empties the cache).",
        minimum=0,
    )
