"""conf/rag.properties is read and validated; environment variables override it."""

from __future__ import annotations

from pathlib import Path

import pytest

from datafari_rag.config import ConfigError, load_settings
from datafari_rag.paths import CONF


def test_the_shipped_properties_load() -> None:
    settings = load_settings(CONF / "rag.properties", env={})
    assert settings.collection_main == "FileShare"
    assert settings.collection_vector == "VectorMain"
    assert settings.vector_field == "vector_384"
    assert settings.agent_url == "http://127.0.0.1:8889/v1"


def test_environment_overrides_the_file(tmp_path: Path) -> None:
    props = tmp_path / "rag.properties"
    props.write_text("solr.url=http://solr-a:8983/solr\nagent.port=9000\n")
    settings = load_settings(props, env={"DATAFARI_RAG_SOLR_URL": "http://solr-b:8983/solr"})
    assert settings.solr_url == "http://solr-b:8983/solr"
    assert settings.agent_port == 9000


def test_an_explicit_embeddings_endpoint_wins_over_the_agent(tmp_path: Path) -> None:
    props = tmp_path / "rag.properties"
    props.write_text("solr.embeddings.endpoint=http://embedder:7000/v1\n")
    assert load_settings(props, env={}).agent_url == "http://embedder:7000/v1"


@pytest.mark.parametrize(
    ("line", "key"),
    [("agent.port=eighty", "agent.port"), ("solr.timeout=-1", "solr.timeout"), ("solr.url=ftp://x", "solr.url")],
)
def test_a_bad_value_names_its_key(tmp_path: Path, line: str, key: str) -> None:
    props = tmp_path / "rag.properties"
    props.write_text(line + "\n")
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_settings(props, env={})
