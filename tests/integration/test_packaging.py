"""What the Docker image holds is what the runtime reads, and compose wires the services by name.

The image installs the package from a wheel (``pip install .``) and copies the files read from
``DATAFARI_RAG_ROOT``; these tests build the same wheel and read the same Dockerfile, so a file
the runtime needs cannot be left out of the image (as the prompt templates once were).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from click.testing import CliRunner

from datafari_rag.cli import main as cli
from datafari_rag.config import Settings, load_settings
from datafari_rag.paths import CONF, CONFIGSETS, MODELS, PROJECT_ROOT, SAMPLE_CORPUS
from datafari_rag.prompts import environment

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
    migrations = (PROJECT_ROOT / "datafari_rag" / "store" / "migrations").rglob("*.py")
    scripts = [p.relative_to(PROJECT_ROOT).as_posix() for p in migrations]
    assert "datafari_rag/store/migrations/env.py" in scripts
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
    solr_nodes = [name for name, service in services.items() if "ZK_HOST" in (service.get("environment") or {})]
    assert len(solr_nodes) == 2 and all(services[n]["environment"]["ZK_HOST"] == "zookeeper:2181" for n in solr_nodes)
    assert "--shards 2 --replicas 2" in " ".join(services["sidecar"]["command"])


def test_compose_starts_solr_secured_before_any_node_answers(tmp_path: Path) -> None:
    """service-account writes security.json (and the password, 0600, never printed), solr-security
    writes it to ZooKeeper, and only then do the Solr nodes start; the sidecar reads the same
    password file; nothing opens Solr."""
    text = (DOCKER / "compose.yaml").read_text()
    compose = yaml.safe_load(text)
    services = compose["services"]
    assert "trustWithoutAuthentication" not in text and "--insecure" not in text
    account, installer = services["service-account"], services["solr-security"]
    written = account["command"][account["command"].index("--output") + 1]
    assert f"file:{written} zk:/security.json -z zookeeper:2181" in " ".join(installer["command"])
    assert installer["depends_on"]["service-account"]["condition"] == "service_completed_successfully"
    for node in (n for n, s in services.items() if "ZK_HOST" in (s.get("environment") or {})):
        assert services[node]["depends_on"] == {"solr-security": {"condition": "service_completed_successfully"}}
    password_file = account["environment"]["DATAFARI_RAG_SOLR_PASSWORDFILE"]
    assert load_settings(Path("/nonexistent"), env=_service_env(compose, "sidecar")).solr_password_file == password_file
    assert "secrets:/secrets:ro" in services["sidecar"]["volumes"] and "secrets:/secrets" in account["volumes"]
    # the sidecar's var/ (its store, and the key sealing the store's secrets) outlives the container
    assert "sidecar-var:/app/var" in services["sidecar"]["volumes"] and "sidecar-var" in compose["volumes"]
    assert "FROM solr:9.10.1" in (DOCKER / "solr.Dockerfile").read_text().splitlines()

    # the service-account command itself, with its volume in a temporary folder
    env = {"DATAFARI_RAG_SOLR_PASSWORDFILE": str(tmp_path / "solr-service.password"), "DATAFARI_RAG_VAR": str(tmp_path)}
    output = tmp_path / "security.json"
    args = [*account["command"][1:-1], str(output)]
    done = CliRunner().invoke(cli, args, env=env)
    assert done.exit_code == 0, done.output
    password = (tmp_path / "solr-service.password").read_text().strip()
    assert len(password) >= 24 and password not in done.output
    assert (
        output.stat().st_mode & 0o777 == 0o600 and (tmp_path / "solr-service.password").stat().st_mode & 0o777 == 0o600
    )
    security = json.loads(output.read_text())
    assert security["authentication"]["class"] == "solr.BasicAuthPlugin" and password not in output.read_text()
    assert [p["name"] for p in security["authorization"]["permissions"]][-1] == "all"
    again = CliRunner().invoke(cli, args, env=env)  # a second `up`: the same password
    assert again.exit_code == 0 and (tmp_path / "solr-service.password").read_text().strip() == password
