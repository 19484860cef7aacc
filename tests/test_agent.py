"""The local agent serves the real all-MiniLM-L6-v2 vectors through the OpenAI embeddings API."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
import requests
from openai import OpenAI

from datafari_rag.agent.embeddings import decode_base64_embedding
from datafari_rag.agent.model import DIMENSION, MODEL_NAME

REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "reference_vectors.json").read_text())


def test_vectors_match_the_reference_model(agent_url: str) -> None:
    """Vectors computed by sentence-transformers (tests/fixtures) are reproduced, cos >= 0.999."""
    client = OpenAI(base_url=agent_url, api_key="local")  # asks for base64, as OpenAI clients do
    texts = [item["text"] for item in REFERENCE["items"]]
    served = client.embeddings.create(model=MODEL_NAME, input=texts)
    for item, data in zip(REFERENCE["items"], served.data, strict=True):
        reference = np.array(item["vector"], dtype=np.float32)
        cosine = float(np.dot(reference, data.embedding) / np.linalg.norm(reference) / np.linalg.norm(data.embedding))
        assert cosine >= 0.999, (item["text"][:40], cosine)


def test_float_and_base64_encodings_agree(agent_url: str) -> None:
    body = {"model": MODEL_NAME, "input": "Le chat est assis sur le tapis."}
    floats = requests.post(f"{agent_url}/embeddings", json=body, timeout=30).json()
    b64 = requests.post(f"{agent_url}/embeddings", json={**body, "encoding_format": "base64"}, timeout=30).json()
    as_float = np.array(floats["data"][0]["embedding"], dtype=np.float32)
    as_b64 = decode_base64_embedding(b64["data"][0]["embedding"])
    assert as_float.shape == (DIMENSION,)
    np.testing.assert_allclose(as_float, as_b64, atol=1e-7)
    assert floats["object"] == "list" and floats["data"][0]["index"] == 0
    assert floats["usage"]["prompt_tokens"] == floats["usage"]["total_tokens"] > 2


def test_a_text_gets_the_same_vector_whatever_shares_its_batch(agent_url: str) -> None:
    alone = requests.post(f"{agent_url}/embeddings", json={"input": ["short text"]}, timeout=30).json()
    texts = ["short text", "a much longer text " * 40, "x"]
    mixed = requests.post(f"{agent_url}/embeddings", json={"input": texts}, timeout=30).json()
    np.testing.assert_allclose(alone["data"][0]["embedding"], mixed["data"][0]["embedding"], atol=1e-6)
    assert [d["index"] for d in mixed["data"]] == [0, 1, 2]


@pytest.mark.parametrize(
    ("body", "status", "param"),
    [
        ({}, 400, "input"),
        ({"input": []}, 400, "input"),
        ({"input": [1, 2, 3]}, 400, "input"),
        ({"input": ["ok", None]}, 400, "input"),
        ({"input": ["x"] * 2049}, 400, "input"),
        ({"input": "x", "encoding_format": "int8"}, 400, "encoding_format"),
        ({"input": "x", "model": "text-embedding-3-large"}, 404, "model"),
        ({"input": "x", "dimensions": 1536}, 400, "dimensions"),
    ],
)
def test_bad_requests_get_openai_errors(agent_url: str, body: dict, status: int, param: str) -> None:
    response = requests.post(f"{agent_url}/embeddings", json=body, timeout=30)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["param"] == param and error["message"]


def test_malformed_json_is_refused(agent_url: str) -> None:
    response = requests.post(
        f"{agent_url}/embeddings", data="{not json", headers={"Content-Type": "application/json"}, timeout=30
    )
    assert response.status_code == 400
    assert "JSON object" in response.json()["error"]["message"]


def test_models_and_health(agent_url: str) -> None:
    models = requests.get(f"{agent_url}/models", timeout=10).json()
    assert [m["id"] for m in models["data"]] == [
        MODEL_NAME,
        "datafari-rag-extractive",
        "bge-small-en-v1.5",
        "bge-small-en-v1.5-query",
        "bge-small-en-v1.5-q",
    ]
    health = requests.get(agent_url.removesuffix("/v1") + "/health", timeout=10).json()
    assert {k: health[k] for k in ("status", "model", "dimension")} == {
        "status": "UP",
        "model": MODEL_NAME,
        "dimension": DIMENSION,
    }
    assert health["queryCache"]["size"] == 10000
    # the model the chunks are embedded with (solr.embeddings.modelName), and where: by default in
    # Solr's JVM; not only the agent's own
    assert health["documents"] == {"model": "bge-small-en-v1.5", "service": "inprocess", "served": True}


def test_a_query_asked_again_is_not_embedded_again(agent_url: str) -> None:
    """The agent keeps query vectors: the second request for a text is a hit, with the same vector."""
    health = agent_url.removesuffix("/v1") + "/health"
    before = requests.get(health, timeout=10).json()["queryCache"]
    text = f"When is the boiler inspected? {time.time()}"
    first, second = (
        requests.post(f"{agent_url}/embeddings", json={"input": text}, timeout=30).json()["data"][0]["embedding"]
        for _ in range(2)
    )
    after = requests.get(health, timeout=10).json()["queryCache"]
    assert first == second
    assert (after["misses"] - before["misses"], after["hits"] - before["hits"]) == (1, 1)


def test_bge_small_is_served_from_its_maven_jar(agent_url: str) -> None:
    """BGE-small-en-v1.5 (ONNX from langchain4j's Maven jar, [CLS] pooling): normalised 384-d
    vectors, the same for a text alone or in a batch, a paraphrase closer than another subject."""
    client = OpenAI(base_url=agent_url, api_key="none")
    texts = [
        "How many days of paid leave do I get?",
        "Employees get 25 days of paid annual leave.",
        "The car park opens at 6 am.",
    ]
    batch = client.embeddings.create(model="bge-small-en-v1.5", input=texts)
    vectors = np.array([d.embedding for d in batch.data], dtype=np.float32)
    assert batch.model == "bge-small-en-v1.5" and vectors.shape == (3, DIMENSION)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    alone = np.array(client.embeddings.create(model="bge-small-en-v1.5", input=texts[1]).data[0].embedding)
    assert np.array_equal(alone.astype(np.float32), vectors[1])
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    minilm = np.array(client.embeddings.create(model=MODEL_NAME, input=texts[1]).data[0].embedding)
    assert not np.allclose(minilm, vectors[1], atol=1e-2)  # another model, another vector space


def test_the_bge_query_model_adds_the_model_cards_instruction(agent_url: str) -> None:
    client = OpenAI(base_url=agent_url, api_key="none")
    text = "how often are pumps inspected"
    query = client.embeddings.create(model="bge-small-en-v1.5-query", input=text).data[0].embedding
    prefixed = "Represent this sentence for searching relevant passages: " + text
    passage = client.embeddings.create(model="bge-small-en-v1.5", input=prefixed).data[0].embedding
    plain = client.embeddings.create(model="bge-small-en-v1.5", input=text).data[0].embedding
    assert query == passage and query != plain
