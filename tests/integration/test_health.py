"""The sidecar's /health reports Solr, both collections, the model store and the agent."""

from __future__ import annotations

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr.bootstrap import BootstrapReport
from datafari_rag.testing.servers import free_port


def test_health_is_green_when_everything_is_up(settings: Settings, bootstrapped: BootstrapReport) -> None:
    client = create_app(settings).test_client()
    response = client.get("/health")
    body = response.get_json()
    assert response.status_code == 200, body
    assert body["status"] == "UP"
    assert body["solr"]["version"] == "9.10.1" and body["solr"]["mode"] == "solrcloud"
    assert set(body["collections"]) == {settings.collection_main, settings.collection_vector}
    assert all(c["status"] == "UP" for c in body["collections"].values())
    assert body["agent"]["models"] == [
        "all-MiniLM-L6-v2",
        "datafari-rag-extractive",
        "bge-small-en-v1.5",
        "bge-small-en-v1.5-query",
    ]
    [model] = body["modelStore"]["models"]
    assert model["name"] == "default_model"
    assert model["params"]["apiKey"] == "***"  # the store echoes the key; /health never does
    # the default mode: FileShare's processor writes the chunks, and it is on
    assert body["indexing"] == {"status": "UP", "mode": "processor", "fileShareProcessor": "on"}


def test_health_says_what_is_down(settings: Settings) -> None:
    dead = settings.replace(
        solr_url=f"http://127.0.0.1:{free_port()}/solr", embeddings_endpoint=f"http://127.0.0.1:{free_port()}/v1"
    )
    response = create_app(dead).test_client().get("/health")
    body = response.get_json()
    assert response.status_code == 503
    assert body["status"] == "DOWN"
    assert body["solr"]["status"] == "DOWN" and "unreachable" in body["solr"]["error"]
    assert body["agent"]["status"] == "DOWN"
