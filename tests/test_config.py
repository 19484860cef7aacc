"""conf/rag.properties is read and validated; environment variables override it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from datafari_rag import config
from datafari_rag.config import KEYS, ConfigError, Settings, load_settings
from datafari_rag.config_docs import MARKDOWN, PROPERTIES, render_markdown, render_properties
from datafari_rag.paths import CONF, control_socket
from datafari_rag.store.database import database_url


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
    [
        ("agent.port=eighty", "agent.port"),
        ("solr.timeout=-1", "solr.timeout"),
        ("solr.url=ftp://x", "solr.url"),
        ("server.allowedOrigins=https://ui.example,ui.example", "server.allowedOrigins"),
        ("server.allowedOrigins=https://ui.example/search", "server.allowedOrigins"),
    ],
)
def test_a_bad_value_names_its_key(tmp_path: Path, line: str, key: str) -> None:
    props = tmp_path / "rag.properties"
    props.write_text(line + "\n")
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_settings(props, env={})


def test_the_generated_files_match_the_settings() -> None:
    """conf/rag.properties and docs/configuration.md are generated from Settings; run
    `datafari-rag config write` after changing a key."""
    assert PROPERTIES.read_text(encoding="utf-8") == render_properties(), "run: datafari-rag config write"
    assert MARKDOWN.read_text(encoding="utf-8") == render_markdown(), "run: datafari-rag config write"


def test_every_key_has_a_help_line_and_a_section() -> None:
    for key, f in KEYS.items():
        assert f.metadata["help"].strip() and f.metadata["section"], key
        assert f"`{key}`" in MARKDOWN.read_text(encoding="utf-8")


def test_the_shipped_file_holds_every_key_at_its_default() -> None:
    assert load_settings(PROPERTIES, env={}) == Settings()


def test_an_unknown_key_or_variable_is_reported_by_name(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    props = tmp_path / "rag.properties"
    props.write_text("solr.url=http://solr:8983/solr\nrag.maxFilez=3\nsomething.else=1\n")
    with caplog.at_level("WARNING", logger="datafari_rag.config"):
        settings = load_settings(props, env={"DATAFARI_RAG_SOLR_URLL": "x", "DATAFARI_RAG_VAR": "/tmp/v"})
    assert settings.solr_url == "http://solr:8983/solr"
    assert "key 'rag.maxFilez' of the properties file (did you mean chunking.maxFiles?)" in caplog.text
    assert "environment variable DATAFARI_RAG_SOLR_URLL (did you mean DATAFARI_RAG_SOLR_URL?)" in caplog.text
    assert "DATAFARI_RAG_VAR" not in caplog.text  # a documented variable that is not a key
    assert "key 'something.else' of the properties file, which names no setting" in caplog.text  # none close


def test_server_knobs_are_settings() -> None:
    settings = load_settings(
        Path("/nonexistent"),
        env={
            "DATAFARI_RAG_SERVER_WORKERS": "3",
            "DATAFARI_RAG_SERVER_THREADS": "8",
            "DATAFARI_RAG_SERVER_ACCESSLOG": "-",
        },
    )
    assert (settings.server_workers, settings.server_threads, settings.server_access_log) == (3, 8, "-")
    with pytest.raises(ConfigError, match=r"server\.workers"):
        load_settings(Path("/nonexistent"), env={"DATAFARI_RAG_SERVER_WORKERS": "0"})


def test_each_server_has_its_own_control_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATAFARI_RAG_VAR", str(tmp_path))
    sidecar, agent = control_socket("", "sidecar", 8080), control_socket("", "agent", 8889)
    assert sidecar != agent and sidecar.startswith(str(tmp_path))
    assert control_socket("none", "sidecar", 8080) is None
    assert control_socket("/run/x.ctl", "sidecar", 8080) == "/run/x.ctl"


@pytest.fixture(autouse=True)
def warnings_said_again() -> None:
    """Each warning is said once per process: another test that read an old name before this one
    must not hide the warning this one expects."""
    config.loading._reported.clear()


def test_datafari_6_1_keys_are_read_as_their_6_2_keys(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    props = tmp_path / "rag.properties"
    props.write_text(
        "rag.api.endpoint=http://llm:8000/v1\nrag.api.token=sk-x\nrag.model=mistral\nrag.temperature=0.2\n"
        "rag.maxToken=300\nrag.maxFiles=5\nchat.query.rewriting.enabled=true\n"
    )
    with caplog.at_level("WARNING", logger="datafari_rag.config"):
        settings = load_settings(props, env={})
    assert (settings.llm_endpoint, settings.llm_token, settings.llm_model) == ("http://llm:8000/v1", "sk-x", "mistral")
    assert (settings.llm_temperature, settings.llm_max_tokens, settings.max_files) == (0.2, 300, 5)
    assert settings.rewriting_bm25 and settings.rewriting_vector
    assert "rag.model is read as llm.model" in caplog.text and "names no setting" not in caplog.text


def test_a_current_key_wins_over_its_old_name(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    props = tmp_path / "rag.properties"
    props.write_text("rag.model=old-model\nllm.model=new-model\n")
    with caplog.at_level("WARNING", logger="datafari_rag.config"):
        settings = load_settings(props, env={"DATAFARI_RAG_RAG_MAXFILES": "7"})
    assert settings.llm_model == "new-model" and settings.max_files == 7
    assert "rag.model is ignored, llm.model is set" in caplog.text


def test_the_legacy_vector_switch_is_honoured_unless_a_method_is_named(tmp_path: Path) -> None:
    props = tmp_path / "rag.properties"
    shipped = PROPERTIES.read_text(encoding="utf-8").replace(
        "solr.enable.vector.search=false", "solr.enable.vector.search=true"
    )
    props.write_text(shipped)
    assert load_settings(props, env={}).retrieval == "vector"  # the shipped file names no method
    props.write_text(shipped.replace("retrieval.method=\n", "retrieval.method=rrf\n"))
    assert load_settings(props, env={}).retrieval == "rrf"


def test_a_query_model_is_a_second_model_store_entry() -> None:
    from datafari_rag.solr.model_store import desired_models

    same = Settings(embeddings_model_name="bge-small-en-v1.5", embeddings_service="openai")
    assert same.query_model == "default_model" and len(desired_models(same)) == 1
    # Solr's JVM (the default service) runs a query model of its own only if it has its class and
    # the passages' dimension: the quantized copy of the same model
    refused = re.escape(
        "solr.embeddings.queryModelName=bge-small-en-v1.5-query: with solr.embeddings.service=inprocess, "
        "one of bge-small-en-v1.5, bge-small-en-v1.5-q"
    )
    with pytest.raises(ValueError, match=refused):
        desired_models(Settings(embeddings_query_model_name="bge-small-en-v1.5-query"))
    passages, quantized = desired_models(Settings(embeddings_query_model_name="bge-small-en-v1.5-q"))
    assert passages["class"].endswith(".BgeSmallEnV15EmbeddingModel")
    assert quantized["name"] == "default_model_query"
    assert quantized["class"].endswith(".BgeSmallEnV15QuantizedEmbeddingModel")
    assert quantized["params"]["onnxFile"] == "bge-small-en-v1.5-q.onnx"
    split = same.replace(embeddings_query_model_name="bge-small-en-v1.5-query")
    passages, queries = desired_models(split)
    assert split.query_model == "default_model_query" == queries["name"]
    assert (passages["params"]["modelName"], queries["params"]["modelName"]) == (
        "bge-small-en-v1.5",
        "bge-small-en-v1.5-query",
    )


def test_a_retired_key_is_a_warning_when_it_asks_for_what_is_done_and_an_error_otherwise(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """vector.embedding.mode: FileShare's processor is the only chunk writer now."""
    props = tmp_path / "rag.properties"
    props.write_text("vector.embedding.mode=processor\n")
    with caplog.at_level("WARNING"):
        assert load_settings(props, env={}) == Settings()
    assert "Retired: vector.embedding.mode=processor" in caplog.text and "Ignored" not in caplog.text
    for value in ("sidecar", "solr"):
        props.write_text(f"vector.embedding.mode={value}\n")
        with pytest.raises(ConfigError, match=f"vector.embedding.mode={value} is retired: FileShare's update"):
            load_settings(props, env={})
    with pytest.raises(ConfigError, match="retired"):
        load_settings(tmp_path / "none", env={"DATAFARI_RAG_VECTOR_EMBEDDING_MODE": "sidecar"})


def test_a_full_chat_completions_url_as_datafari_61_wrote_it_is_its_base_url() -> None:
    for endpoint in ("https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1/chat/completions/"):
        assert Settings(llm_endpoint=endpoint).llm_url == "https://api.openai.com/v1"
    assert Settings(llm_endpoint="https://api.openai.com/v1").llm_url == "https://api.openai.com/v1"


def test_the_store_keeps_reading_its_older_key_and_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The database holds users, workflows and jobs as well as conversations: its key is store.url
    and its default file store.db; an install that set conversations.url or has a conversations.db
    keeps its users and keys."""
    props = tmp_path / "rag.properties"
    props.write_text("conversations.url=postgresql+psycopg://rag@db/rag\n")
    with caplog.at_level("WARNING", logger="datafari_rag.config"):
        assert load_settings(props, env={}).store_url == "postgresql+psycopg://rag@db/rag"
    assert "conversations.url is read as store.url" in caplog.text
    assert load_settings(props, env={"DATAFARI_RAG_STORE_URL": "sqlite:///x.db"}).store_url == "sqlite:///x.db"
    monkeypatch.setenv("DATAFARI_RAG_VAR", str(tmp_path))
    assert database_url(Settings()) == f"sqlite:///{tmp_path / 'store.db'}"
    (tmp_path / "conversations.db").touch()  # an older install's
    assert database_url(Settings()) == f"sqlite:///{tmp_path / 'conversations.db'}"
    (tmp_path / "store.db").touch()  # once there is a store.db, it is the store
    assert database_url(Settings()) == f"sqlite:///{tmp_path / 'store.db'}"


def test_a_key_given_by_hand_that_names_no_setting_says_the_closest_one() -> None:
    """--set, workflows and run-time keys go through convert: a typo names the key it was meant to be."""
    with pytest.raises(ConfigError, match=r"llm\.modell: names no setting \(did you mean llm\.model\?\)"):
        config.convert("llm.modell", "gpt-4o-mini")
    with pytest.raises(ConfigError, match=r"rag\.maxToken: names no setting \(did you mean llm\.maxTokens\?\)"):
        config.convert("rag.maxToken", "300")  # Datafari 6.1's name, read from the file only
    with pytest.raises(ConfigError, match=r"^zzz: names no setting \(see"):
        config.convert("zzz", "1")
