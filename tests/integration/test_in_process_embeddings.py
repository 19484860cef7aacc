"""``solr.embeddings.service=inprocess``: bge-small-en-v1.5 runs inside Solr's JVM (langchain4j's
ONNX jar, built by the plugin's model store), with no embedding service at all: the chunks Solr
stores carry the vectors the same ONNX file gives in the sidecar, and kNN answers find them."""

from __future__ import annotations

import numpy as np

from datafari_rag.agent.onnx_model import BGE_SMALL, BGE_SMALL_Q, OnnxEmbedder
from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.sample import index_sample
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.solr.model_store import IN_PROCESS, get_models
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import free_port

API = "/Datafari/rest/v2.0"


def test_the_model_inside_solr_gives_the_agents_vectors_and_kNN_finds_them(
    solr: SolrClient, settings: Settings, fake_llm_server: tuple[FakeLlm, str]
) -> None:
    mine = settings.replace(
        collection_main="inproc_FileShare",
        collection_vector="inproc_VectorMain",
        embeddings_service="inprocess",
        embeddings_model_name="bge-small-en-v1.5",
        embeddings_endpoint=f"http://127.0.0.1:{free_port()}/v1",  # nothing listens: no HTTP hop is made
        embeddings_threads=2,
        retrieval_method="vector",
        llm_endpoint=fake_llm_server[1],
    )
    bootstrap(solr, mine)
    [entry] = [m for m in get_models(solr, mine.collection_vector) if m["name"] == mine.embeddings_model]
    assert entry["class"] == IN_PROCESS["bge-small-en-v1.5"] and entry["params"] == {
        "threads": 2,
        "queryThreads": 2,
        "onnxFile": "bge-small-en-v1.5.onnx",
        "tokenizerFile": "bge-small-en-v1.5-tokenizer.json",
        "pooling": "CLS",
    }
    assert index_sample(Indexer.of(solr, mine)) > 0
    solr.get(f"{mine.collection_vector}/update", {"commit": "true"})
    chunks = solr.get(
        f"{mine.collection_vector}/select",
        params={"q": "*:*", "rows": 5, "fl": "embedded_content,vector_384", "sort": "id asc"},
    )["response"]["docs"]
    onnx = OnnxEmbedder(BGE_SMALL)
    for chunk in chunks:
        stored, expected = np.asarray(chunk["vector_384"]), onnx.embed([chunk["embedded_content"]])[0]
        cosine = float(stored @ expected / np.linalg.norm(stored) / np.linalg.norm(expected))
        assert cosine >= 0.9999, (cosine, chunk["embedded_content"][:80])
    out = create_app(mine).test_client().post(f"{API}/ai/rag", json={"query": "How many days of paid leave?"})
    body = out.get_json()
    assert body["status"] == "OK", body
    assert any("holidays" in d["url"] for d in body["content"]["documents"]), body["content"]["documents"]


def test_a_quantized_query_model_beside_the_passages_model_finds_the_same_chunks(
    solr: SolrClient, settings: Settings, fake_llm_server: tuple[FakeLlm, str]
) -> None:
    """``solr.embeddings.queryModelName=bge-small-en-v1.5-q``: queries embedded by the 8-bit copy
    of the passages' model, in Solr's JVM too; its vectors are near the full model's, and kNN
    through it finds the chunks the full model finds."""
    mine = settings.replace(
        collection_main="inprocq_FileShare",
        collection_vector="inprocq_VectorMain",
        embeddings_service="inprocess",
        embeddings_model_name="bge-small-en-v1.5",
        embeddings_query_model_name="bge-small-en-v1.5-q",
        embeddings_endpoint=f"http://127.0.0.1:{free_port()}/v1",  # nothing listens: no HTTP hop is made
        retrieval_method="vector",
        llm_endpoint=fake_llm_server[1],
    )
    bootstrap(solr, mine)
    entries = {m["name"]: m for m in get_models(solr, mine.collection_vector)}
    assert entries["default_model"]["class"] == IN_PROCESS["bge-small-en-v1.5"]
    assert entries["default_model_query"]["class"] == IN_PROCESS["bge-small-en-v1.5-q"]
    assert entries["default_model_query"]["params"]["onnxFile"] == "bge-small-en-v1.5-q.onnx"
    assert index_sample(Indexer.of(solr, mine)) > 0
    solr.get(f"{mine.collection_vector}/update", {"commit": "true"})
    question = "How many days of paid leave do employees get?"
    full, quantized = (OnnxEmbedder(m).embed([question])[0] for m in (BGE_SMALL, BGE_SMALL_Q))
    assert float(full @ quantized) >= 0.99
    found = {
        model: [
            d["parent_doc"]
            for d in solr.get(
                f"{mine.collection_vector}/vector",
                {"queryrag": question, "model": model, "topK": 5, "fl": "parent_doc"},
            )["response"]["docs"]
        ]
        for model in ("default_model", "default_model_query")
    }
    assert found["default_model_query"][0] == found["default_model"][0]
    assert len(set(found["default_model_query"]) & set(found["default_model"])) >= 3, found
    out = create_app(mine).test_client().post(f"{API}/ai/rag", json={"query": question})
    body = out.get_json()
    assert body["status"] == "OK", body
    assert any("holidays" in d["url"] for d in body["content"]["documents"]), body["content"]["documents"]
