"""A sidecar worker reads the model its answers embed with when it starts, not at its first answer."""

from __future__ import annotations

import pytest

from datafari_rag.agent.onnx_model import PACKAGED, PackagedModel
from datafari_rag.config import Settings
from datafari_rag.indexing import embedder


def test_a_worker_whose_answers_embed_reads_the_model_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[PackagedModel] = []
    monkeypatch.setattr(embedder, "_onnx", read.append)
    settings = Settings(embeddings_service="inprocess", confidence_relevance="true")
    thread = embedder.preload(settings)
    assert thread is not None and thread.daemon
    thread.join(5)
    assert read == [PACKAGED[settings.embeddings_model_name]]


@pytest.mark.parametrize(
    "changes",
    [
        {"confidence_relevance": "false"},
        {"confidence_relevance": "auto", "llm_model": "gpt-4o-mini"},
        {"embeddings_service": "openai"},
        {"embeddings_model_name": "another-model"},
    ],
)
def test_a_worker_whose_answers_embed_nothing_here_reads_nothing(
    monkeypatch: pytest.MonkeyPatch, changes: dict[str, object]
) -> None:
    """Relevance off (or left to auto with another LLM than the local generator), another service
    embedding, or a model that is not packaged: nothing is read."""
    read: list[PackagedModel] = []
    monkeypatch.setattr(embedder, "_onnx", read.append)
    settings = Settings(embeddings_service="inprocess", confidence_relevance="true").replace(**changes)
    assert embedder.preload(settings) is None and read == []
