"""The embedding model Solr's text-to-vector calls, and how it is reached."""

from __future__ import annotations

from dataclasses import dataclass

from .keys import EMBED, key


@dataclass(frozen=True)
class EmbeddingSettings:
    """The embedding model and service (solr.embeddings.*, solr.vector.field)."""

    embeddings_model: str = key(
        EMBED, "solr.embeddings.model", "default_model", "Name of the model in VectorMain's model store."
    )
    embeddings_model_name: str = key(
        EMBED,
        "solr.embeddings.modelName",
        "bge-small-en-v1.5",
        "The model the embedding service runs (the model store entry's modelName): bge-small-en-v1.5 (the "
        "local agent serves it from its Maven jar), or all-MiniLM-L6-v2 (same 384 dimensions, another vector "
        "space: a collection holds the vectors of one model; changing it means indexing again).",
    )
    embeddings_query_model_name: str = key(
        EMBED,
        "solr.embeddings.queryModelName",
        "",
        "The model that embeds queries, when not the passages' (e.g. bge-small-en-v1.5-query: BGE with its query "
        "instruction, through the agent; bge-small-en-v1.5-q: the same model quantized, in Solr's JVM, a query "
        "embedded 3 times faster); a second model store entry, <solr.embeddings.model>_query. Empty: the same "
        "model.",
    )
    embeddings_timeout: int = key(
        EMBED,
        "solr.embeddings.timeout",
        30,
        "Seconds Solr's model waits for one embedding call (the model store entry's timeout); the "
        "agent's agent.embeddings.deadline must be shorter, so that it never computes a batch its "
        "caller has given up.",
        minimum=1,
        maximum=600,
    )
    embeddings_max_retries: int = key(
        EMBED,
        "solr.embeddings.maxRetries",
        2,
        "Times Solr's model sends a failed or timed-out embedding call again (the model store entry's "
        "maxRetries) before the write fails; the indexer then sends the batch again (index.retry.attempts).",
        minimum=0,
        maximum=10,
    )
    vector_field: str = key(EMBED, "solr.vector.field", "vector_384", "The dense vector field the model fills.")
    embeddings_endpoint: str = key(
        EMBED,
        "solr.embeddings.endpoint",
        "",
        "OpenAI-compatible base URL (…/v1) Solr calls for embeddings; empty: the local agent. With "
        "solr.embeddings.service=gemini, the Gemini API's (empty: Google's, …/v1beta); with inprocess, "
        "only the sidecar's other models call it (cache.modelName, forbidden.modelName, faq.modelName…).",
    )
    embeddings_service: str = key(
        EMBED,
        "solr.embeddings.service",
        "inprocess",
        "The embedding API Solr and the sidecar call: inprocess (the model inside Solr's JVM, langchain4j's "
        "ONNX jar, and the same ONNX file in the sidecar: no HTTP hop per query or chunk; bge-small-en-v1.5), "
        "openai (any OpenAI-compatible one, the local agent included) or gemini (Google's Gemini API: "
        "langchain4j's GoogleAiEmbeddingModel in Solr, google-genai in the sidecar).",
        choices=("inprocess", "openai", "gemini"),
    )
    embeddings_threads: int = key(
        EMBED,
        "solr.embeddings.threads",
        2,
        "solr.embeddings.service=inprocess: threads Solr's in-process model embeds with (per model).",
        minimum=1,
        maximum=64,
    )
    embeddings_query_threads: int = key(
        EMBED,
        "solr.embeddings.queryThreads",
        2,
        "solr.embeddings.service=inprocess: threads a text embedded while no other is (a search's query) runs on, "
        "in a second ONNX session of the model (about 330 MB more in Solr's memory; kNN's query embedded in about "
        "half the time on 2 cores); 1: no second session, every text on one thread.",
        minimum=1,
        maximum=64,
    )
    embeddings_token: str = key(
        EMBED, "solr.embeddings.token", "", "The embedding API's key (empty: the local agent's, which needs none)."
    )
    embeddings_dimensions: int = key(
        EMBED,
        "solr.embeddings.dimensions",
        0,
        "Vector length asked of models that can shorten theirs (Gemini's outputDimensionality, OpenAI's "
        "dimensions), to fit solr.vector.field; 0: the model's own.",
        minimum=0,
        maximum=4096,
    )

    @property
    def query_model(self) -> str:
        """The model store entry that embeds queries (knn_text_to_vector's model)."""
        return f"{self.embeddings_model}_query" if self.embeddings_query_model_name else self.embeddings_model
