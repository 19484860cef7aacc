"""``solr.embeddings.service=gemini``: Google's Gemini API embeds the chunks inside Solr
(langchain4j's GoogleAiEmbeddingModel, built by the plugin's model store) and the queries in Solr
and in the sidecar (google-genai), here at a local recording stub of the API whose values come
from the real model — so the vectors Solr stores are the model's, and kNN answers find them."""

from __future__ import annotations

import numpy as np

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.embedder import ChunkEmbedder
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.sample import index_sample
from datafari_rag.llm.embeddings import GEMINI_MODEL
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.solr.model_store import get_models
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import serve
from datafari_rag.testing.vendor_stubs import GeminiStub

API = "/Datafari/rest/v2.0"
KEY = "gemini-test-key"


def test_gemini_embeds_chunks_in_solr_and_queries_in_solr_and_the_sidecar(
    solr: SolrClient, settings: Settings, chunk_embedder: object, fake_llm_server: tuple[FakeLlm, str]
) -> None:
    model = chunk_embedder.embed  # type: ignore[attr-defined]
    stub = GeminiStub(embed=lambda texts: np.asarray(model(texts)).tolist())
    with serve(stub.app()) as url:
        mine = settings.replace(
            collection_main="gem_FileShare",
            collection_vector="gem_VectorMain",
            embeddings_service="gemini",
            embeddings_endpoint=f"{url}/v1beta",
            embeddings_token=KEY,
            embeddings_model_name="gemini-embedding-001",
            embeddings_dimensions=384,
            retrieval_method="vector",
            llm_endpoint=fake_llm_server[1],
        )
        report = bootstrap(solr, mine)
        assert report.vector_field == "vector_384 (384), the model's dimension"  # asked of Gemini, 384 wide
        [entry] = [m for m in get_models(solr, mine.collection_vector) if m["name"] == mine.embeddings_model]
        assert entry["class"] == GEMINI_MODEL and entry["params"]["outputDimensionality"] == 384
        index_sample(Indexer.of(solr, mine))
        solr_calls = [a for a in stub.agents if a == "LangChain4j"]  # Solr's model, inside its JVM
        assert solr_calls, stub.agents  # Solr's processor embedded the chunks through the Gemini API
        # a stored chunk's vector is the model's for its text
        chunk = solr.get(
            f"{mine.collection_vector}/select",
            params={"q": "*:*", "rows": 1, "fl": "embedded_content,vector_384", "sort": "id asc"},
        )["response"]["docs"][0]
        stored, expected = np.asarray(chunk["vector_384"]), np.asarray(model([chunk["embedded_content"]])[0])
        assert float(stored @ expected / np.linalg.norm(stored) / np.linalg.norm(expected)) > 0.9999
        before = len(stub.agents)
        out = create_app(mine).test_client().post(f"{API}/ai/rag", json={"query": "How many days of paid leave?"})
        body = out.get_json()
        assert body["status"] == "OK", body
        assert body["content"]["documents"][0]["url"] == "file://share/hr/holidays.txt"
        assert len(stub.agents) > before  # the query's vector: Solr's knn_text_to_vector asked Gemini
        vectors = ChunkEmbedder(mine).embed(["How many days of paid leave?"])  # the sidecar's client
        assert len(vectors[0]) == 384 and "google-genai" in stub.agents[-1]
        assert set(stub.keys) == {KEY}
        endings = (":batchEmbedContents", ":embedContent")  # Solr's query vector: embedContent
        assert all(p.split("?")[0].startswith("/v1beta/models/gemini-embedding-001:") for p in stub.paths)
        assert {p.split("?")[0].endswith(endings) for p in stub.paths} == {True}
