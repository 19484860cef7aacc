"""OpenAI-compatible ``POST /v1/embeddings``, ``GET /v1/models`` and ``GET /health``.

Follows the OpenAI API conventions that clients rely on: ``input`` as a string or a list of
strings, ``encoding_format`` ``float`` (default) or ``base64`` (little-endian float32, what the
``openai`` Python client asks for), ``usage`` with token counts, and OpenAI's error shape.
"""

from __future__ import annotations

import base64
import threading
import time
from functools import partial
from typing import Any

import numpy as np
from flask import Blueprint, Response, current_app, jsonify, request

from .admission import Overloaded
from .model import DIMENSION, MODEL_NAME, SentenceEmbedder
from .onnx_model import PACKAGED, OnnxEmbedder, jar_path

MAX_INPUTS = 2048  # OpenAI's limit per request
MAX_INPUT_CHARS = 100_000

bp = Blueprint("embeddings", __name__)
_STARTED = int(time.time())


def openai_error(status: int, message: str, param: str | None = None, code: str | None = None) -> Response:
    """OpenAI's error body: {"error": {"message", "type", "param", "code"}}."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    response = jsonify(body)
    response.status_code = status
    return response


def _embedder() -> SentenceEmbedder:
    return current_app.extensions["embedder"]


_LOADING = threading.Lock()


def _model(name: str) -> SentenceEmbedder | OnnxEmbedder | None:
    """The embedder serving ``name``: MiniLM, or a packaged model loaded at its first use."""
    if name == MODEL_NAME:
        return _embedder()
    if name not in PACKAGED:
        return None
    loaded = current_app.extensions.setdefault("packaged", {})
    with _LOADING:
        if name not in loaded:
            loaded[name] = OnnxEmbedder(PACKAGED[name])
        return loaded[name]


def _parse_inputs(body: Any) -> list[str] | Response:
    if not isinstance(body, dict):
        return openai_error(400, "The request body must be a JSON object.")
    raw = body.get("input")
    texts = [raw] if isinstance(raw, str) else raw
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        return openai_error(400, "'input' must be a string or a non-empty list of strings.", "input")
    if len(texts) > MAX_INPUTS:
        return openai_error(400, f"'input' may hold at most {MAX_INPUTS} texts.", "input")
    if any(len(t) > MAX_INPUT_CHARS for t in texts):
        return openai_error(400, f"Each input may be at most {MAX_INPUT_CHARS} characters.", "input")
    return texts


@bp.post("/v1/embeddings")
def create_embeddings() -> Response:
    body: Any = request.get_json(silent=True)  # checked by _parse_inputs
    texts = _parse_inputs(body)
    if isinstance(texts, Response):
        return texts
    model = body.get("model", MODEL_NAME)
    served = ", ".join([MODEL_NAME, *PACKAGED])
    try:
        embedder = _model(model) if isinstance(model, str) else None
    except FileNotFoundError as exc:
        return openai_error(404, f"The model '{model}' is not installed: {exc}", "model", "model_not_found")
    if embedder is None:
        message = f"The model '{model}' does not exist; this agent serves {served}."
        return openai_error(404, message, "model", "model_not_found")
    encoding = body.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        return openai_error(400, "'encoding_format' must be 'float' or 'base64'.", "encoding_format")
    dimensions = body.get("dimensions")
    dimension = getattr(embedder, "dimension", DIMENSION)
    if dimensions is not None and dimensions != dimension:
        return openai_error(400, f"This model only produces {dimension} dimensions.", "dimensions")
    try:
        with current_app.extensions["admission"].turn(len(texts)) as turn:
            compute = partial(turn.embed, compute=embedder.embed)
            vectors = current_app.extensions["query_vectors"].embed(model, texts, compute)
    except Overloaded as exc:
        response = openai_error(503, str(exc), code="overloaded")
        response.headers["Retry-After"] = str(exc.retry_after)
        return response
    tokens = sum(embedder.count_tokens(t) for t in texts)
    data = []
    for i, vector in enumerate(vectors):
        if encoding == "base64":
            value: Any = base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
        else:
            value = [float(x) for x in vector]
        data.append({"object": "embedding", "index": i, "embedding": value})
    return jsonify(
        {
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
    )


@bp.get("/v1/models")
def list_models() -> Response:
    return jsonify(
        {
            "object": "list",
            "data": [
                {"id": MODEL_NAME, "object": "model", "created": _STARTED, "owned_by": "datafari-rag"},
                {"id": "datafari-rag-extractive", "object": "model", "created": _STARTED, "owned_by": "datafari-rag"},
                *(
                    {"id": name, "object": "model", "created": _STARTED, "owned_by": "datafari-rag"}
                    for name, model in PACKAGED.items()
                    if jar_path(model).is_file()  # installed
                ),
            ],
        }
    )


@bp.get("/health")
def health() -> Response:
    """UP; ``model`` is the agent's own (the guard's and the generator's), ``documents`` the models
    the configuration has Solr embed the chunks and the queries with, where (``service``: inprocess,
    Solr's JVM itself; openai or gemini, an API) and whether this agent serves them."""
    kept = current_app.extensions["query_vectors"]
    cache = {"size": kept.size, "hits": kept.hits, "misses": kept.misses}
    passages, queries, service = current_app.extensions.get("document_models", (MODEL_NAME, "", "openai"))
    documents = {"model": passages, "service": service, "served": _serves(passages)}
    if queries:
        documents |= {"queryModel": queries, "queryModelServed": _serves(queries)}
    body = {"status": "UP", "model": MODEL_NAME, "dimension": DIMENSION, "documents": documents}
    return jsonify({**body, "queryCache": cache})


def _serves(name: str) -> bool:
    return name == MODEL_NAME or (name in PACKAGED and jar_path(PACKAGED[name]).is_file())


def decode_base64_embedding(value: str) -> np.ndarray:
    """The inverse of the base64 encoding above (what OpenAI clients do)."""
    return np.frombuffer(base64.b64decode(value), dtype="<f4")
