"""The local AI agent's Flask application (``datafari-rag agent`` serves it with gunicorn): OpenAI-compatible
embeddings and an extractive chat model, so that the product answers with no API key."""

from __future__ import annotations

from pathlib import Path

from flask import Flask, Response

from ..config import load_settings
from .admission import Admission
from .chat import bp as chat_bp
from .embeddings import bp as embeddings_bp
from .embeddings import openai_error
from .extractive import ExtractiveGenerator
from .model import SentenceEmbedder
from .query_cache import QueryVectors


def create_agent_app(
    embedder: SentenceEmbedder | None = None, generator: str | None = None, admission: Admission | None = None
) -> Flask:
    """Builds the agent; the models are loaded once here and shared by all request threads.

    ``generator`` is ``agent.generator``: ``extractive`` (default) or ``gguf`` (optional extra).
    ``admission``: how indexing batches take turns (default: ``agent.embeddings.*``).
    """
    app = Flask("datafari_rag.agent")
    app.extensions["embedder"] = embedder or SentenceEmbedder()
    settings = load_settings() if generator is None or admission is None else None
    if admission is None and settings is not None:
        admission = Admission(settings.agent_max_pending, settings.agent_embedding_deadline)
    app.extensions["admission"] = admission
    app.extensions["query_vectors"] = QueryVectors(settings.agent_query_cache if settings else 0)
    # what Solr asks the agent for (solr.embeddings.modelName / queryModelName): /health names them
    chunks = settings or load_settings()
    app.extensions["document_models"] = (
        chunks.embeddings_model_name,
        chunks.embeddings_query_model_name,
        chunks.embeddings_service,
    )
    kind = generator or (settings.agent_generator if settings else "extractive")
    if kind == "gguf":
        from .gguf import GgufGenerator

        path = settings.agent_gguf_path if settings else ""
        app.extensions["generator"] = GgufGenerator(Path(path) if path else None)
    else:
        app.extensions["generator"] = ExtractiveGenerator(app.extensions["embedder"])
    app.register_blueprint(embeddings_bp)
    app.register_blueprint(chat_bp)

    @app.errorhandler(404)
    def not_found(_: Exception) -> Response:
        return openai_error(404, "Unknown endpoint.", code="not_found")

    @app.errorhandler(405)
    def bad_method(_: Exception) -> Response:
        return openai_error(405, "Method not allowed on this endpoint.")

    @app.errorhandler(Exception)
    def internal(exc: Exception) -> Response:
        app.logger.exception("agent request failed")
        return openai_error(500, f"The agent failed: {type(exc).__name__}.")

    return app
