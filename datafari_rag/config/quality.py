"""Retrieval and answer quality: reranking, query enhancement, context assembly, strategies, confidence."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from ..filters import NO_FILTER, SourceFilter, source_filter
from ..registry import RERANKERS, STRATEGIES
from .keys import EXTRACTIVE_MODEL, QUALITY, ConfigError, key


@dataclass(frozen=True)
class QualitySettings:
    """Reranking, query enhancement, context assembly, strategies (rerank.*, query.*, context.*, rag.strategy…)."""

    rag_strategy: str = key(
        QUALITY,
        "rag.strategy",
        "simple",
        "How the answer is written: " + STRATEGIES.help() + ".",
        choices=STRATEGIES.names,
    )
    confidence_relevance: str = key(
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
    min_confidence: float = key(
        QUALITY,
        "rag.minConfidence",
        0.1,
        "An answer whose confidence weighs its relevance (rag.confidence.relevance) and is below this is "
        "replaced by the abstention sentence (its sources still listed); 0: every answer is shown. 0.1 keeps "
        "false abstention at or below 0.1 on SQuAD 2.0 and PIAF with the local generator (docs/evaluation.md "
        "has the curve to choose it from).",
        maximum=1,
    )
    reflect_max_rounds: int = key(
        QUALITY, "rag.reflect.maxRounds", 1, "reflect: check-and-correct rounds at most.", minimum=1, maximum=3
    )
    tot_branches: int = key(
        QUALITY, "rag.tot.branches", 3, "tot: candidate answers written at each level.", minimum=2, maximum=5
    )
    tot_depth: int = key(
        QUALITY,
        "rag.tot.depth",
        2,
        "tot: levels of the tree (each level's candidates improve on the best so far).",
        minimum=1,
        maximum=3,
    )
    multihop_max_hops: int = key(
        QUALITY, "rag.multihop.maxHops", 2, "multihop: follow-up searches at most.", minimum=1, maximum=4
    )
    prompt_instructions: str = key(
        QUALITY,
        "prompt.instructions",
        "",
        "Instructions added to the system message of every answer prompt (a workflow's prompt; empty: none).",
    )
    prompt_templates: str = key(
        QUALITY,
        "prompt.templates",
        "",
        'Answer prompts replaced, as JSON: {"refine_initial": "<jinja2 text>"}; text without blocks replaces '
        "the instructions, {% block user %} the rest (a workflow's prompts; empty: the packaged ones). See "
        "docs/strategies.md.",
    )
    retrieval_filters: str = key(
        QUALITY,
        "retrieval.filters",
        "",
        'Every search restricted to these sources, as a request\'s filters: {"extension": ["pdf"]} '
        "(whitelisted fields; empty: none). Narrows what a user may read, never widens it.",
    )
    query_multi_query: int = key(
        QUALITY,
        "query.multiQuery.count",
        0,
        "Multi-query expansion: the LLM writes this many other wordings of the question, each is searched "
        "and the lists are fused by reciprocal rank (0: off).",
        maximum=5,
    )
    query_multi_query_min_votes: int = key(
        QUALITY,
        "query.multiQuery.minVotes",
        1,
        "Multi-query: a passage must be found by at least this many of the queries (when that leaves "
        "nothing, all are kept).",
        minimum=1,
        maximum=6,
    )
    query_hyde: bool = key(
        QUALITY,
        "query.hyde.enabled",
        False,
        "HyDE: the LLM writes a passage that would answer the question, and kNN searches with that "
        "passage's embedding (BM25 keeps the question).",
    )
    query_self_query_fields: str = key(
        QUALITY,
        "query.selfQuery.fields",
        "",
        "Self-querying: the LLM may turn the question into a query plus filters on these fields only, "
        "comma-separated among source, repo_source, extension, language, author, type_category, "
        "last_modified (empty: off).",
    )
    context_min_relevance_score: float = key(
        QUALITY,
        "context.minRelevanceScore",
        0.0,
        "Passages scored below this are not sent (0: all). The score is the last stage's: BM25's, the "
        "hybrid fusion's (normalized: 0 to the sum of the weights), or the reranker's.",
    )
    context_neighbours: int = key(
        QUALITY,
        "context.neighbours",
        0,
        "Parent-child enrichment: a chunk found brings the chunks chunk_index ± this of its document (0: off).",
        maximum=5,
    )
    context_segment_max_chars: int = key(
        QUALITY,
        "context.segment.maxChars",
        0,
        "Relevant-segment extraction: a longer passage is cut to its best contiguous run of sentences "
        "(the most question words) of at most this many characters (0: off).",
    )
    context_segment_method: str = key(
        QUALITY,
        "context.segment.method",
        "lexical",
        "Relevant-segment extraction by: lexical (the run of sentences with the most question words) or llm "
        "(RAG.NET's: the LLM copies the relevant part; lexical when its reply is not a part of the passage).",
        choices=("lexical", "llm"),
    )
    context_dedup: bool = key(
        QUALITY, "context.dedup", False, "Drop passages repeating a better one (exact or near-duplicate)."
    )
    context_dedup_threshold: float = key(
        QUALITY,
        "context.dedup.threshold",
        0.95,
        "Near-duplicate: the cosine of two passages (their word counts, or their embeddings with "
        "context.dedup.method=embedding) above which the second is dropped.",
        maximum=1,
    )
    context_dedup_method: str = key(
        QUALITY,
        "context.dedup.method",
        "lexical",
        "How near-duplicates are found: lexical (the cosine of word counts) or embedding (MATIH's semantic "
        "deduplication: the cosine of the passages' embeddings by context.dedup.modelName, which also catches "
        "paraphrases; lexical again if the embedding service fails).",
        choices=("lexical", "embedding"),
    )
    context_dedup_model_name: str = key(
        QUALITY,
        "context.dedup.modelName",
        "all-MiniLM-L6-v2",
        "context.dedup.method=embedding: the embedding service's model (solr.embeddings.*) that compares passages.",
    )
    context_max_chunks_per_source: int = key(
        QUALITY, "context.maxChunksPerSource", 0, "At most this many passages of one document (0: no cap)."
    )
    context_max_tokens: int = key(
        QUALITY,
        "context.maxTokens",
        0,
        "Token budget of the passages sent (0: only prompt.max.request.size's characters); passages past "
        "it are not sent.",
    )
    context_tokenizer: str = key(
        QUALITY,
        "context.tokenizer",
        "",
        "The tokenizer.json that counts context.maxTokens (the LLM's own when it has one; empty: the "
        "packaged all-MiniLM-L6-v2 WordPiece tokenizer).",
    )
    rerank_enabled: bool = key(
        QUALITY,
        "rerank.enabled",
        False,
        "Rerank the first rerank.topN passages found before the LLM reads them (retrieval goes that deep).",
    )
    rerank_backend: str = key(
        QUALITY,
        "rerank.backend",
        "api",
        RERANKERS.help() + ".",
        choices=RERANKERS.names,
    )
    rerank_top_n: int = key(QUALITY, "rerank.topN", 20, "Reranking: passages reranked at most.", minimum=2, maximum=100)
    rerank_timeout: float = key(
        QUALITY,
        "rerank.timeout",
        5.0,
        "Reranking: seconds it may take; slower or failed, the retrieval order is kept (and logged).",
        minimum=0.1,
        maximum=120,
    )
    rerank_api_url: str = key(
        QUALITY, "rerank.api.url", "", "api: the /rerank URL (e.g. https://api.cohere.com/v2/rerank, a local server)."
    )
    rerank_api_key: str = key(QUALITY, "rerank.api.key", "", "api: the bearer token (empty: none).")
    rerank_api_model: str = key(QUALITY, "rerank.api.model", "", "api: the model named in the request (empty: none).")
    rerank_onnx_path: str = key(
        QUALITY,
        "rerank.onnx.path",
        "",
        "onnx: a folder holding a cross-encoder exported to ONNX (one .onnx file) and its tokenizer.json.",
    )

    @property
    def base_filter(self) -> SourceFilter:
        """``retrieval.filters`` as a filter every search of these settings narrows by."""
        return _base_filter(self.retrieval_filters)

    @property
    def self_query_fields(self) -> list[str]:
        return [f.strip() for f in self.query_self_query_fields.split(",") if f.strip()]


@lru_cache(maxsize=64)
def _base_filter(raw: str) -> SourceFilter:
    if not raw.strip():
        return NO_FILTER
    try:
        return source_filter(json.loads(raw))
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        raise ConfigError(f"retrieval.filters: {exc}") from None
