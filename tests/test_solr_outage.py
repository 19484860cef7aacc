"""A Solr that stops answering (restarting, overloaded) costs requests milliseconds once the
circuit opens, and /health always answers within a second. Solr is played by a socket that
accepts connections and never answers, as a Solr in the middle of a restart does."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient, SolrError
from datafari_rag.solr.breaker import CircuitBreaker


@pytest.fixture
def silent_solr() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(256)  # connections queue in the backlog; nothing ever reads or answers them
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/solr"


def timed(call) -> float:  # type: ignore[no-untyped-def]
    began = time.monotonic()
    with pytest.raises(SolrError):
        call()
    return time.monotonic() - began


def test_the_circuit_opens_after_consecutive_timeouts_then_tries_again(silent_solr: str) -> None:
    client = SolrClient(silent_solr, timeout=0.5, breaker=CircuitBreaker(failures=3, cooldown=1.0))
    first = [timed(lambda: client.get("admin/info/system")) for _ in range(3)]
    assert all(t >= 0.45 for t in first)  # each waited for the timeout
    fast = [timed(lambda: client.get("admin/info/system")) for _ in range(20)]
    assert max(fast) < 0.05  # the circuit is open: no wait at all
    time.sleep(1.05)
    assert timed(lambda: client.get("admin/info/system")) >= 0.45  # one trial after the cooldown


def test_a_success_closes_the_circuit() -> None:
    breaker = CircuitBreaker(failures=2, cooldown=0.1)
    breaker.failed()
    breaker.failed()
    assert not breaker.allow() and breaker.is_open
    time.sleep(0.15)
    assert breaker.allow() and not breaker.allow()  # one trial at a time
    breaker.succeeded()
    assert breaker.allow() and not breaker.is_open


def test_health_answers_within_a_second_whatever_solr_does(silent_solr: str) -> None:
    client = create_app(Settings(solr_url=silent_solr, solr_timeout=30)).test_client()
    for _ in range(3):
        began = time.monotonic()
        response = client.get("/health")
        assert time.monotonic() - began < 1.0
        assert response.status_code == 503 and response.get_json()["status"] == "DOWN"


def test_searches_fail_fast_once_solr_stopped_answering(silent_solr: str) -> None:
    settings = Settings(solr_url=silent_solr, solr_timeout=0.5, solr_circuit_failures=2, solr_circuit_cooldown=30)
    client = create_app(settings).test_client()
    for _ in range(2):
        client.get("/Datafari/rest/v2.0/search/select", query_string={"q": "x"})
    began = time.monotonic()
    for _ in range(20):
        body = client.get("/Datafari/rest/v2.0/search/select", query_string={"q": "x"}).get_json()
        assert body["content"]["error"]["label"] == "ragTechnicalError"
    assert time.monotonic() - began < 1.0  # 20 searches, none waiting for Solr's timeout


def test_health_checks_never_open_the_circuit_for_every_search(silent_solr: str) -> None:
    """A check's short budget running out is not Solr failing: however many /health calls time
    out against a slow Solr, searches still go to Solr (they would fail at once, for everyone,
    for solr.circuit.cooldown, if the checks counted)."""
    settings = Settings(solr_url=silent_solr, solr_timeout=0.5, solr_circuit_failures=2, solr_circuit_cooldown=30)
    app = create_app(settings)
    client = app.test_client()
    for _ in range(5):
        assert client.get("/health").status_code == 503
    began = time.monotonic()
    client.get("/Datafari/rest/v2.0/search/select", query_string={"q": "x"})
    assert time.monotonic() - began >= 0.45  # it asked Solr (and waited its timeout): the circuit is closed
    # once searches themselves have failed, the open circuit is what /health reports, at once
    client.get("/Datafari/rest/v2.0/search/select", query_string={"q": "x"})
    began = time.monotonic()
    report = client.get("/health").get_json()
    assert time.monotonic() - began < 0.2 and "circuit open" in report["solr"]["error"]
