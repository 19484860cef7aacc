"""VectorMain's text-to-vector model store: the embedding model Solr calls, as JSON entries.

The store (``/schema/text-to-vector-model-store``) echoes the embedding service's API key, so
its content leaves this module only with the key redacted (see :func:`redact`).
"""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

from ..agent.onnx_model import PACKAGED
from ..config import Settings
from ..llm.embeddings import GEMINI_MODEL
from ..paths import MODELS
from .client import SolrClient, SolrError

PATH = "schema/text-to-vector-model-store"
SECRET_PARAMS = ("apiKey", "api_key", "token")


# langchain4j's in-process models (an ONNX file in a Maven jar): their class, by the model name they run
IN_PROCESS = {m.name: m.solr_class for m in PACKAGED.values() if m.solr_class}


def desired_models(settings: Settings) -> list[dict[str, Any]]:
    """The passages' model, and the queries' when another one embeds them."""
    models = [desired_model(settings)]
    if not settings.embeddings_query_model_name:
        return models
    if settings.embeddings_service == "inprocess":
        # another model Solr's JVM runs, of the passages' dimension (a quantized copy of the same model)
        passages = PACKAGED[settings.embeddings_model_name]
        query_model = PACKAGED.get(settings.embeddings_query_model_name)
        if query_model is None or not query_model.solr_class or query_model.dimension != passages.dimension:
            runs = [m.name for m in PACKAGED.values() if m.solr_class and m.dimension == passages.dimension]
            raise ValueError(
                f"solr.embeddings.queryModelName={settings.embeddings_query_model_name}: with "
                f"solr.embeddings.service=inprocess, one of {', '.join(runs)}"
            )
        query = desired_model(settings.replace(embeddings_model_name=query_model.name))
    else:
        query = desired_model(settings)
        query["params"]["modelName"] = settings.embeddings_query_model_name
    query["name"] = settings.query_model
    models.append(query)
    return models


DIMENSIONS = {"openai": "dimensions", "gemini": "outputDimensionality"}  # each builder's name for it


def desired_model(settings: Settings) -> dict[str, Any]:
    """The model JSON of the configset, aimed at the configured embedding service."""
    if settings.embeddings_service == "inprocess":
        if settings.embeddings_model_name not in IN_PROCESS:
            raise ValueError(
                f"solr.embeddings.modelName={settings.embeddings_model_name}: solr.embeddings.service=inprocess "
                f"runs {', '.join(IN_PROCESS)}"
            )
        files = PACKAGED[settings.embeddings_model_name]  # the files the sidecar runs, in the class's jar
        # named, the plugin runs them one thread per text, the executor's threads side by side
        # (the jar's own session takes every core for each text); a text embedded alone (a query)
        # runs on queryThreads threads
        params = {"onnxFile": files.onnx, "tokenizerFile": files.tokenizer, "pooling": files.pooling}
        threads = {"threads": settings.embeddings_threads, "queryThreads": settings.embeddings_query_threads}
        return {
            "class": IN_PROCESS[settings.embeddings_model_name],
            "name": settings.embeddings_model,
            "params": {**threads, **params},
        }
    model: dict[str, Any] = json.loads((MODELS / "default_model.json").read_text())
    if settings.embeddings_service == "gemini":
        model["class"] = GEMINI_MODEL
    model["name"] = settings.embeddings_model
    model["params"]["baseUrl"] = settings.agent_url
    model["params"]["modelName"] = settings.embeddings_model_name
    model["params"]["timeout"] = settings.embeddings_timeout
    model["params"]["maxRetries"] = settings.embeddings_max_retries
    if settings.embeddings_token:
        model["params"]["apiKey"] = settings.embeddings_token
    if settings.embeddings_dimensions:
        model["params"][DIMENSIONS[settings.embeddings_service]] = settings.embeddings_dimensions
    return model


def get_models(solr: SolrClient, collection: str, timeout: float | None = None) -> list[dict[str, Any]]:
    return list(solr.get(f"{collection}/{PATH}", timeout=timeout).get("models", []))


MODEL_WAIT = 600.0  # seconds a model is waited for once its upload outlasted solr.timeout


def put_model(solr: SolrClient, collection: str, model: dict[str, Any], wait: float = MODEL_WAIT) -> None:
    """Stores ``model``. Solr answers the upload once it has loaded the model, which a busy node
    takes longer than ``solr.timeout`` to do (40 s was seen): an upload that ran out of time is
    followed by looking for the model in the store until it is there (or ``wait`` seconds)."""
    try:
        solr.request("PUT", f"{collection}/{PATH}", json=model)
        return
    except SolrError as exc:
        if not exc.timed_out:
            raise
        ends = time.monotonic() + wait
    while time.monotonic() < ends:
        with contextlib.suppress(SolrError):  # a busy node: looked at again
            if any(m.get("name") == model["name"] for m in get_models(solr, collection)):
                return
        time.sleep(1.0)
    raise SolrError(0, f"the model {model['name']} was not in {collection}'s model store {wait:.0f} s after its upload")


def delete_model(solr: SolrClient, collection: str, name: str) -> None:
    try:
        solr.request("DELETE", f"{collection}/{PATH}/{name}")
    except SolrError as exc:
        if exc.status != 404:
            raise


def redact(model: dict[str, Any]) -> dict[str, Any]:
    """A copy of a model entry that is safe to show: secrets replaced by ``***``."""
    params = {k: ("***" if k in SECRET_PARAMS else v) for k, v in (model.get("params") or {}).items()}
    return {**model, "params": params}
