"""Session fixtures on the real components: the local agent's real model and a real Solr.

Solr comes from ``DATAFARI_RAG_SOLR_URL`` if set, else from a container when a Docker engine
answers, else from the project's local runtime (Maven jars), started once on a free port.
Test collections carry a prefix so that a shared Solr's own collections are never touched.
"""

from __future__ import annotations

import os
import secrets
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from datafari_rag.agent.app import create_agent_app
from datafari_rag.agent.model import MODEL_NAME, SentenceEmbedder
from datafari_rag.agent.onnx_model import PACKAGED, OnnxEmbedder
from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import BootstrapReport, bootstrap
from datafari_rag.solr.security_json import write_config
from datafari_rag.solr.user_properties import SERVICE_ACCOUNT
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.postgres import new_database, postgres
from datafari_rag.testing.servers import free_port, serve

TEST_PREFIX = os.environ.get("DATAFARI_RAG_TEST_PREFIX", "test_")


def _say(config: pytest.Config, line: str) -> None:
    """Writes a line to the test log even while pytest captures output."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line(line)


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real PostgreSQL server (pgserver's binaries), started once."""
    with postgres(tmp_path_factory.mktemp("pg")) as server:
        yield server


# PostgreSQL starts a server of its own (pgserver): its runs are in the integration tier
@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty database on each engine the conversation store supports."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'conversations.db'}"
    return new_database(request.getfixturevalue("postgres_server"))


@pytest.fixture(scope="session")
def embedder() -> SentenceEmbedder:
    return SentenceEmbedder()


@pytest.fixture
def chunk_embedder(settings: Settings, embedder: SentenceEmbedder) -> SentenceEmbedder | OnnxEmbedder:
    """The model that embeds the test collections' chunks (``solr.embeddings.modelName``), in-process:
    what a vector stored in Solr must equal."""
    name = settings.embeddings_model_name
    return embedder if name == MODEL_NAME else OnnxEmbedder(PACKAGED[name])


@pytest.fixture(scope="session")
def agent_url(embedder: SentenceEmbedder) -> Iterator[str]:
    """The real agent (real model) on a free port; its OpenAI base URL (…/v1)."""
    with serve(create_agent_app(embedder, "extractive")) as url:
        yield f"{url}/v1"


def _docker_available() -> bool:
    try:
        import docker

        docker.from_env().ping()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def solr_endpoint(request: pytest.FixtureRequest) -> Iterator[tuple[str, tuple[str, str] | None]]:
    """Solr's URL and the service account (user, password) the tests are; None: an open Solr.

    The local runtime starts secured, as ``datafari-rag solr start`` does: its security.json is in
    ZooKeeper before Solr answers, with a password made for this session."""
    if os.environ.get("DATAFARI_RAG_SOLR_URL"):
        url = os.environ["DATAFARI_RAG_SOLR_URL"]
        password = os.environ.get("DATAFARI_RAG_SOLR_PASSWORD")
        _say(request.config, f"Solr: using DATAFARI_RAG_SOLR_URL={url}")
        yield url, (os.environ.get("DATAFARI_RAG_SOLR_USERNAME") or SERVICE_ACCOUNT, password) if password else None
        return
    if _docker_available():
        from tests.solr_container import solr_container

        with solr_container() as url:
            _say(request.config, f"Solr: container at {url}")
            yield url, None
        return
    from datafari_rag.solr.runtime import LocalSolr

    home = Path(tempfile.mkdtemp(prefix="datafari-rag-solr-"))
    account = Settings(solr_password=secrets.token_urlsafe(16))
    node = LocalSolr(port=free_port(), home=home, security_json=write_config(account, home / "security.json"))
    seconds = node.start(timeout=180)
    auth = (SERVICE_ACCOUNT, account.solr_password)
    _say(
        request.config,
        f"Solr: local runtime {node.status(auth).get('version')} from Maven jars at {node.url}, secured, "
        f"ready in {seconds:.1f}s",
    )
    try:
        yield node.url, auth
    finally:
        node.stop()


@pytest.fixture(scope="session")
def solr_url(solr_endpoint: tuple[str, tuple[str, str] | None]) -> str:
    return solr_endpoint[0]


@pytest.fixture(scope="session")
def solr_auth(solr_endpoint: tuple[str, tuple[str, str] | None]) -> tuple[str, str] | None:
    """The service account's (user, password) on the session's Solr; None when it is open."""
    return solr_endpoint[1]


@pytest.fixture(scope="session")
def settings(
    solr_url: str, solr_auth: tuple[str, str] | None, agent_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Settings:
    user, password = solr_auth or ("", "")
    return Settings(
        solr_url=solr_url,
        solr_username=user,
        solr_password=password,
        collection_main=f"{TEST_PREFIX}FileShare",
        collection_vector=f"{TEST_PREFIX}VectorMain",
        # Solr calls the agent for embeddings, not its in-JVM model (the default): the suite's tests of a
        # slow, failing or killed embedding service, of a replaced or another model, need a service to
        # act on; the default has its own tests (integration/test_in_process_embeddings.py)
        embeddings_service="openai",
        embeddings_endpoint=agent_url,
        store_url=f"sqlite:///{tmp_path_factory.mktemp('store') / 'conversations.db'}",
        # the fake LLM's answers are canned, not calibrated: every answer is shown; rag.minConfidence's
        # default is tested with answers made to be told apart (test_generation_strategies.py)
        min_confidence=0.0,
    )


@pytest.fixture(scope="session")
def solr(solr_url: str, solr_auth: tuple[str, str] | None) -> SolrClient:
    """The service account's client (the sidecar's view: unfiltered, naming users)."""
    return SolrClient(solr_url, timeout=60, auth=solr_auth)


@pytest.fixture(scope="session")
def bootstrapped(request: pytest.FixtureRequest, solr: SolrClient, settings: Settings) -> BootstrapReport:
    began = time.monotonic()
    report = bootstrap(solr, settings)
    _say(request.config, f"bootstrap ({time.monotonic() - began:.1f}s): " + "; ".join(report.lines()))
    return report


@pytest.fixture(scope="session")
def fake_llm_server() -> Iterator[tuple[FakeLlm, str]]:
    fake = FakeLlm()
    with serve(fake.app()) as url:
        yield fake, f"{url}/v1"


@pytest.fixture
def fake_llm(fake_llm_server: tuple[FakeLlm, str]) -> Iterator[FakeLlm]:
    # a stream of the previous test may still be finishing its bookkeeping (it runs just after the
    # client read its last byte): counted now, it would be counted in this test
    fake_llm_server[0].wait_closed()
    fake_llm_server[0].reset()
    yield fake_llm_server[0]
    fake_llm_server[0].wait_closed()
    fake_llm_server[0].reset()  # the next test that takes the server as it is gets the default answers
