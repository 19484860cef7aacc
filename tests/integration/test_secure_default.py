"""Solr comes up secured without being asked: ``solr start``, ``bootstrap`` and ``serve`` as a user
runs them, the generated service account, and the start-up check's refusals (`datafari-rag run`
itself: tests/ui/test_first_run.py)."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import urllib3
from click.testing import CliRunner, Result

from datafari_rag.cli import main
from datafari_rag.solr import SolrClient
from datafari_rag.testing.servers import free_port

pytestmark = pytest.mark.skipif(bool(os.environ.get("DATAFARI_RAG_SOLR_URL")), reason="needs the local runtime")

# what only the service account may reach (anonymous: 401), on a collection and on Solr itself
SERVICE_ONLY = [
    ("GET", "FileShare/internal", {"q": "*:*"}),
    ("GET", "FileShare/get", {"id": "x"}),
    ("GET", "FileShare/config", {}),
    ("GET", "FileShare/schema", {}),
    ("POST", "FileShare/update", {"commit": "true"}),
    ("GET", "VectorMain/internal", {"q": "*:*"}),
    ("GET", "admin/collections", {"action": "LIST"}),
    ("GET", "admin/info/system", {}),
    ("GET", "admin/authorization", {}),
]


def _invoke(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


@pytest.fixture
def environment(tmp_path: Path, agent_url: str) -> Iterator[dict[str, str]]:
    """The command's settings: its own var folder and Solr port; every node it starts is stopped."""
    env = {
        "DATAFARI_RAG_VAR": str(tmp_path / "var"),
        "DATAFARI_RAG_SOLR_URL": f"http://127.0.0.1:{free_port()}/solr",
        "DATAFARI_RAG_SOLR_EMBEDDINGS_ENDPOINT": agent_url,
    }
    yield env
    _invoke(env, "solr", "stop")


def _status(url: str, method: str, path: str, params: dict[str, str], auth: tuple[str, str] | None = None) -> int:
    """The HTTP status Solr answers (a direct client on the network; no retry, no proxy)."""
    headers = {"Content-Type": "application/json", **(urllib3.make_headers(basic_auth=":".join(auth)) if auth else {})}
    body = b"[]" if method == "POST" else None
    return urllib3.request(
        method,
        f"{url}/{path}",
        fields=params if method == "GET" else None,
        body=body,
        headers=headers,
        retries=False,
        timeout=30,
    ).status


def test_solr_start_and_bootstrap_come_up_secured_without_being_asked(environment: dict[str, str]) -> None:
    started = _invoke(environment, "solr", "start", "--timeout", "180")
    assert started.exit_code == 0, started.output
    password_file = Path(environment["DATAFARI_RAG_VAR"]) / "secrets" / "solr-service.password"
    password = password_file.read_text().strip()
    assert len(password) >= 24 and password_file.stat().st_mode & 0o777 == 0o600
    assert password not in started.output and "WARNING" not in started.output
    url = environment["DATAFARI_RAG_SOLR_URL"]
    account = ("datafari-rag", password)
    service = SolrClient(url, auth=account)
    assert _status(url, "GET", "admin/info/system", {}) == 401  # from its first answer

    booted = _invoke(environment, "bootstrap")
    assert booted.exit_code == 0, booted.output
    assert "Solr's door: Solr 9.10.1, BasicAuthPlugin, solr.RuleBasedAuthorizationPlugin with 'all'" in booted.output
    assert password not in booted.output
    refused = {f"{m} {p}": _status(url, m, p, q) for m, p, q in SERVICE_ONLY}
    assert set(refused.values()) == {401}, refused
    assert _status(url, "GET", "FileShare/select", {"q": "*:*"}) == 200  # the public view, filtered
    assert _status(url, "GET", "FileShare/internal", {"q": "*:*"}, account) == 200
    status = _invoke(environment, "solr", "status")
    assert '"version": "9.10.1"' in status.output and password not in status.output

    # an administrator drops the 'all' permission: /get is open to anyone, and the check refuses
    rules = service.get("admin/authorization")["authorization"]["permissions"]
    service.post("admin/authorization", json={"delete-permission": [p["name"] for p in rules].index("all") + 1})
    _wait(lambda: _status(url, "GET", "FileShare/get", {"id": "x"}) == 200)
    served = _invoke(environment, "serve")
    assert served.exit_code == 1 and "no 'all' permission for a role" in served.output, served.output
    assert "Traceback" not in served.output
    # bootstrap (secure) puts the product's rules back
    again = _invoke(environment, "bootstrap")
    assert again.exit_code == 0 and "1 permission(s) added" in again.output, again.output
    _wait(lambda: _status(url, "GET", "FileShare/get", {"id": "x"}) == 401)


def test_an_open_solr_only_with_the_development_switch_and_the_sidecar_refuses_it(environment: dict[str, str]) -> None:
    started = _invoke(environment, "solr", "start", "--insecure", "--timeout", "180")
    assert started.exit_code == 0 and "WARNING" in started.output and "WITHOUT authentication" in started.output
    assert not (Path(environment["DATAFARI_RAG_VAR"]) / "secrets" / "solr-service.password").exists()
    assert _status(environment["DATAFARI_RAG_SOLR_URL"], "GET", "admin/info/system", {}) == 200
    served = _invoke(environment, "serve")
    assert served.exit_code == 1 and "has no authentication" in served.output and "--insecure" in served.output


def _wait(condition: object, timeout: float = 30.0) -> None:
    """Solr applies security changes from its ZooKeeper watch, a moment after the API answered."""
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "Solr did not apply the change in time"
        time.sleep(0.2)


def test_run_refuses_a_taken_port_before_starting_anything(environment: dict[str, str]) -> None:
    """A second `make run` beside a first: its sidecar could not bind, while the first one's answered
    its readiness checks; it printed the whole banner, then "A service stopped unexpectedly"."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env = {**environment, "DATAFARI_RAG_SERVER_PORT": str(port), "DATAFARI_RAG_AGENT_PORT": str(free_port())}
        result = _invoke(env, "run")
    assert result.exit_code == 1, result.output
    assert f"Port {port} on 127.0.0.1 (server.port) is taken" in result.output, result.output
    assert "set DATAFARI_RAG_SERVER_PORT to another port" in result.output
    with pytest.raises(urllib3.exceptions.HTTPError):  # nothing was started: no Solr answers
        urllib3.request("GET", f"{environment['DATAFARI_RAG_SOLR_URL']}/admin/info/system", retries=False, timeout=5)
