"""Embedding texts in batches from the sidecar: the semantic chunker's sentences, the semantic
cache's and the topic guard's texts (chunks are embedded in Solr, by FileShare's processor).

It calls the same embedding API and model as Solr's text-to-vector model (read from the model
definition ``bootstrap`` installs: ``llm/embeddings.py``), so the sidecar and Solr give the same
vector for the same text. With ``solr.embeddings.service=inprocess`` the chunks' model runs in this
process, from the ONNX file Solr's JVM runs; the other models (the cache's, the guard's) are asked
of the OpenAI-compatible API (``solr.embeddings.endpoint``: the local agent).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from functools import cache

from ..agent.onnx_model import PACKAGED, OnnxEmbedder, PackagedModel
from ..config import Settings
from ..llm.embeddings import EmbeddingError, embedding_call
from ..solr.model_store import desired_model

IN_FLIGHT = 2  # batches sent at once: the service starts the next while the last blocks of one finish


__all__ = ["ChunkEmbedder", "EmbeddingError"]


class ChunkEmbedder:
    def __init__(self, settings: Settings, model: str | None = None) -> None:
        """``model``: another model of the same service (the guard's, the cache's), else the chunks'."""
        self.batch = settings.vector_embedding_batch
        packaged = in_process(settings, model)
        if packaged is not None:  # the ONNX file Solr runs, run here: the same vectors
            self.model = packaged.name
            self._embed_batch = lambda texts: _onnx(packaged).embed(texts).tolist()
            return
        if settings.embeddings_service == "inprocess":
            settings = settings.replace(embeddings_service="openai")  # another model: the agent's API
        wanted = desired_model(settings)
        self.model = model or wanted["params"]["modelName"]
        self._embed_batch = embedding_call(wanted["class"], wanted["params"], self.model)

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Vectors for ``texts``, in order, in batches of ``vector.embedding.batch`` texts, two in
        flight (the service starts the next while the last blocks of one finish)."""
        batches = [texts[start : start + self.batch] for start in range(0, len(texts), self.batch)]
        if len(batches) <= 1:
            return [vector for batch in batches for vector in self._embed_batch(batch)]
        with ThreadPoolExecutor(max_workers=IN_FLIGHT, thread_name_prefix="embed-client") as pool:
            return [vector for vectors in pool.map(self._embed_batch, batches) for vector in vectors]


def in_process(settings: Settings, model: str | None = None) -> PackagedModel | None:
    """The packaged model this process runs itself for ``model`` (else the chunks'), or None when
    the embedding service is not in-process or the model is not packaged (the agent's API)."""
    if settings.embeddings_service != "inprocess":
        return None
    return PACKAGED.get(model or settings.embeddings_model_name)


def preload(settings: Settings) -> threading.Thread | None:
    """Reads the chunks' in-process model in a daemon thread when this process's answers will embed
    (``rag.confidence.relevance``): a worker's first answer would otherwise wait for the ONNX file
    to be read (64 answers at once: 0.71 of the LLM's own rate, a 10-pack map-reduce 3.9 s instead
    of 2.1). None when answers embed nothing here (relevance off, or another service embeds)."""
    packaged = in_process(settings)
    if not settings.relevance_weighed or packaged is None:
        return None
    thread = threading.Thread(target=_onnx, args=(packaged,), name="embedder-preload", daemon=True)
    thread.start()
    return thread


@cache
def _onnx(model: PackagedModel) -> OnnxEmbedder:
    """``model``'s ONNX file, read on first use: a sidecar worker that never embeds never holds it."""
    return OnnxEmbedder(model)
