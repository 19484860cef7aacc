"""Embedding chunks in batches from the sidecar (``vector.embedding.mode=sidecar``).

It calls the same OpenAI-compatible endpoint and model as Solr's text-to-vector model (read
from the model definition ``bootstrap`` installs), so both modes give the same vector for the
same text, and query-time ``knn_text_to_vector`` matches either.
"""

from __future__ import annotations

import openai

from ..config import Settings
from ..solr.bootstrap import desired_model


class EmbeddingError(RuntimeError):
    """The embedding service failed (after retries)."""


class ChunkEmbedder:
    def __init__(self, settings: Settings) -> None:
        params = desired_model(settings)["params"]
        self.model = params["modelName"]
        self.batch = settings.vector_embedding_batch
        self.client = openai.OpenAI(
            base_url=params["baseUrl"],
            api_key=params.get("apiKey") or "none",
            timeout=float(params.get("timeout", 30)) * 4,
            max_retries=int(params.get("maxRetries", 2)),
        )

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch):
            try:
                response = self.client.embeddings.create(model=self.model, input=texts[start : start + self.batch])
            except openai.OpenAIError as exc:
                raise EmbeddingError(f"The embedding service failed: {exc}") from exc
            vectors += [d.embedding for d in sorted(response.data, key=lambda d: d.index)]
        return vectors
