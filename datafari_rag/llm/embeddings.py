"""Clients of the embedding APIs a model-store entry may name (``solr.embeddings.service``): any
OpenAI-compatible one (the local agent included) through ``openai``, and Google's Gemini API
through its own SDK (``google-genai``). The sidecar calls the same API and model as Solr's entry,
so both give the same vector for the same text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import openai
from google import genai
from google.genai import errors, types

from ..metrics import EMBEDDING_CALLS, EMBEDDING_SECONDS, timed_call

Embed = Callable[[list[str]], list[list[float]]]
GEMINI_MODEL = "dev.langchain4j.model.googleai.GoogleAiEmbeddingModel"


class EmbeddingError(RuntimeError):
    """The embedding service failed (after retries)."""


def embedding_call(model_class: str, params: dict[str, Any], model: str) -> Embed:
    """One batch call of ``model`` at the service a model-store entry (``model_class``, ``params``)
    describes; raises :class:`EmbeddingError`."""
    if model_class == GEMINI_MODEL:
        return _gemini(params, model)
    return _openai(params, model)


def _openai(params: dict[str, Any], model: str) -> Embed:
    client = openai.OpenAI(
        base_url=params["baseUrl"],
        api_key=params.get("apiKey") or "none",
        timeout=float(params.get("timeout", 30)) * 4,
        max_retries=int(params.get("maxRetries", 2)),
    )
    dimensions = params.get("dimensions")

    def embed(texts: list[str]) -> list[list[float]]:
        try:
            with timed_call(EMBEDDING_CALLS, EMBEDDING_SECONDS):
                extra = {"dimensions": dimensions} if dimensions else {}
                response = client.embeddings.create(model=model, input=texts, **extra)
        except openai.OpenAIError as exc:
            raise EmbeddingError(f"The embedding service failed: {exc}") from exc
        return [d.embedding for d in sorted(response.data, key=lambda d: d.index)]

    return embed


def _gemini(params: dict[str, Any], model: str) -> Embed:
    """Gemini's ``batchEmbedContents``: the SDK wants the API's root and its version apart."""
    url = urlsplit(params["baseUrl"].rstrip("/"))
    root, _, version = url.path.rpartition("/")
    options = types.HttpOptions(
        base_url=f"{url.scheme}://{url.netloc}{root}/",
        api_version=version or "v1beta",
        timeout=int(float(params.get("timeout", 30)) * 4000),
        retry_options=types.HttpRetryOptions(attempts=int(params.get("maxRetries", 2)) + 1),
    )
    client = genai.Client(api_key=params.get("apiKey") or "none", http_options=options)
    config = types.EmbedContentConfig(output_dimensionality=params.get("outputDimensionality"))

    def embed(texts: list[str]) -> list[list[float]]:
        try:
            with timed_call(EMBEDDING_CALLS, EMBEDDING_SECONDS):
                response = client.models.embed_content(model=model, contents=texts, config=config)
        except (errors.APIError, OSError, ValueError) as exc:
            raise EmbeddingError(f"The Gemini embedding service failed: {exc}") from exc
        vectors = [list(e.values or []) for e in response.embeddings or []]
        if len(vectors) != len(texts) or not all(vectors):
            raise EmbeddingError(f"The Gemini embedding service gave {len(vectors)} vectors for {len(texts)} texts.")
        return vectors

    return embed
