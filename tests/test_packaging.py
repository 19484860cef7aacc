"""What the Docker image holds is what the runtime reads, and compose wires the services by name.

The image installs the package from a wheel (``pip install .``) and copies the files read from
``DATAFARI_RAG_ROOT``; these tests build the same wheel and read the same Dockerfile, so a file
the runtime needs cannot be left out of the image (as the prompt templates once were).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from datafari_rag.config import Settings, load_settings
from datafari_rag.paths import CONF, CONFIGSETS, MODELS, PROJECT_ROOT, SAMPLE_CORPUS
from datafari_rag.rag.prompts import environment

DOCKER = PROJECT_ROOT / "docker"


def _instructions(name: str) -> list[list[str]]:
    """The Dockerfile's instructions of one kind (continuation lines joined), as word lists."""
    text = (DOCKER / "Dockerfile").read_text().replace("\\\n", " ")
    return [shlex.split(line)[1:] for line in text.splitlines() if line.split()[:1] == [name]]


def _copied() -> list[Path]:
    return [PROJECT_ROOT / words[0] for words in _instructions("COPY")]


def _image_env() -> dict[str, str]:
    return dict(word.split("=", 1) for words in _instructions("ENV") for word in words)


def _covered(path: Path) -> bool:
    return any(path == source or source in path.parents for source in _copied())


def test_every_file_read_from_the_project_root_is_copied_into_the_image() -> None:
    read = [*CONF.iterdir(), CONFIGSETS / "FileShare" / "conf", CONFIGSETS / "VectorMain" / "conf"]
    read += [MODELS / "default_model.json", PROJECT_ROOT / Settings().mapping_file]
    missing = [str(p.relative_to(PROJECT_ROOT)) for p in read if not _covered(p)]
    assert not missing, f"not in the image: {missing}"
    assert _image_env()["DATAFARI_RAG_ROOT"] == "/app" and ["/app"] in _instructions("WORKDIR")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """The wheel ``pip install .`` builds in the image."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(PROJECT_ROOT)],
        check=True,
        capture_output=True,
    )
    return zipfile.ZipFile(next(out.glob("datafari_rag-*.whl")))


def test_the_package_carries_its_templates_and_sample_corpus(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    templates = environment().list_templates()
    assert templates and all(f"datafari_rag/prompts/{t}" in names for t in templates)
    assert f"datafari_rag/{SAMPLE_CORPUS.relative_to(PROJECT_ROOT / 'datafari_rag').as_posix()}" in names
    # every file of the package that is not code is package data, so none stays behind
    data = [p for p in (PROJECT_ROOT / "datafari_rag").rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")]
    missing = [
        p.relative_to(PROJECT_ROOT).as_posix() for p in data if p.relative_to(PROJECT_ROOT).as_posix() not in names
    ]
    assert not missing, f"not in the wheel: {missing}"
    migrations = (PROJECT_ROOT / "datafari_rag" / "conversations" / "migrations").rglob("*.py")
    scripts = [p.relative_to(PROJECT_ROOT).as_posix() for p in migrations]
    assert "datafari_rag/conversations/migrations/env.py" in scripts
    assert all(s in names for s in scripts), f"migrations not in the wheel: {set(scripts) - names}"


def _service_env(compose: dict, name: str) -> dict[str, str]:
    return {**_image_env(), **{k: str(v) for k, v in (compose["services"][name].get("environment") or {}).items()}}


def test_compose_wires_the_sidecar_to_the_agent_and_solr_by_service_name() -> None:
    compose = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    services = compose["services"]
    sidecar = load_settings(Path("/nonexistent"), env=_service_env(compose, "sidecar"))
    agent = load_settings(Path("/nonexistent"), env=_service_env(compose, "agent"))
    assert services["agent"]["command"][-1] == "agent" and agent.agent_host == "0.0.0.0"
    for url in (sidecar.llm_url, sidecar.agent_url):  # the LLM, and the model bootstrap installs in Solr
        assert urlsplit(url).hostname == "agent" and urlsplit(url).port == agent.agent_port
    assert urlsplit(sidecar.solr_url).hostname in services and sidecar.server_host == "0.0.0.0"
    solr_nodes = [name for name, service in services.items() if "solr" in str(service.get("build", {}))]
    assert len(solr_nodes) == 2 and all(services[n]["environment"]["ZK_HOST"] == "zookeeper:2181" for n in solr_nodes)
    assert "--shards 2 --replicas 2" in " ".join(services["sidecar"]["command"])
