"""Several Solr URLs: a node that cannot be connected to is passed over for the next, which then
stays first; a node that answers 503 is moved last; one that answers another error is not; all
down is one clear error. The nodes are played by local sockets: one closed, one answering like
Solr, one never answering."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from datafari_rag.solr import SolrClient, SolrError
from datafari_rag.solr.breaker import CircuitBreaker


def _answer(handler: BaseHTTPRequestHandler, status: int, body: dict) -> None:
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class Solr(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.do_GET()

    def do_GET(self) -> None:
        status = 404 if "missing" in self.path else 503 if "unavailable" in self.path else 200
        _answer(self, status, {"responseHeader": {"status": 0}, "path": self.path})

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def live() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Solr)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/solr"
    server.shutdown()


def closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/solr"  # nothing listens there any more


def test_a_node_that_cannot_be_reached_is_passed_over_and_the_next_stays_first(live: str) -> None:
    dead = closed_port()
    client = SolrClient(f"{dead}, {live}", timeout=5, breaker=CircuitBreaker(failures=2, cooldown=30))
    assert client.get("admin/info/system")["path"].startswith("/solr/admin/info/system")
    assert client.base_url == live and client.urls == [live, dead]  # the live node first from now on
    for _ in range(5):  # never a failure counted: the circuit stays closed
        client.get("x")
    assert client.probe().base_url == live  # the health checks' view shares the order


def test_a_node_that_answers_with_an_error_is_not_passed_over(live: str) -> None:
    client = SolrClient(f"{live},{closed_port()}", timeout=5)
    with pytest.raises(SolrError) as refused:
        client.get("missing")
    assert refused.value.status == 404 and client.base_url == live


def test_a_node_that_answers_unavailable_is_moved_last_for_the_next_try(live: str) -> None:
    """Solr's 503 ("Cannot talk to ZooKeeper - Updates are disabled" from a node reconnecting)
    is the caller's to send again: the node stays in the list, after the others."""
    other = closed_port()
    client = SolrClient(f"{live},{other}", timeout=5)
    with pytest.raises(SolrError) as refused:
        client.post("unavailable/update", json=[])
    assert refused.value.status == 503 and client.urls == [other, live]


def test_every_node_down_is_one_clear_error() -> None:
    first, second = closed_port(), closed_port()
    with pytest.raises(SolrError) as down:
        SolrClient(f"{first},{second}", timeout=2).get("admin/info/system")
    assert down.value.status == 0 and first in str(down.value) and second in str(down.value)


SEEN: dict[str, int] = {}  # requests per path
CHANGING = {  # path -> the error its first answers are
    "/solr/lost/select": (403, "URL http://n1/solr/c_shard1_replica_n6/ is neither a live node of the cluster"),
    "/solr/expiring/select": (500, "KeeperErrorCode = ConnectionLoss for /live_nodes"),
    "/solr/frozen/select": (500, "org.apache.solr.client.solrj.SolrServerException: Idle timeout 10000 ms elapsed"),
    "/solr/forbidden/select": (403, "Unauthorized request, Response code: 403"),
}


class Changing(BaseHTTPRequestHandler):
    """A node whose cluster is changing: its first answers to each path are Solr's errors of that
    moment, then it answers."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        path = self.path.split("?")[0]
        SEEN[path] = SEEN.get(path, 0) + 1
        status, message = CHANGING.get(path, (200, ""))
        if path != "/solr/forbidden/select" and SEEN[path] > 2:
            status = 200
        _answer(self, status, {"error": {"msg": message, "code": status}} if status != 200 else {"response": {}})

    def log_message(self, *_: object) -> None:
        pass


def test_a_read_refused_while_the_cluster_changes_is_sent_again_and_no_other_refusal_is() -> None:
    """Killing a node of the local cluster showed Solr refusing a search once with 403 (the replica
    it chose left live_nodes before its allow-list check) and ZooKeeper's ConnectionLoss: reads
    are sent again after a pause, as is a shard that stayed silent past Solr's socketTimeout (a
    frozen node); a real refusal is said at once, sent once."""
    from datafari_rag.security.acl import UserAccess
    from datafari_rag.solr.search import RESEND_PAUSES, secured_search

    server = ThreadingHTTPServer(("127.0.0.1", 0), Changing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = SolrClient(f"http://127.0.0.1:{server.server_port}/solr", timeout=5)
    access = UserAccess.anonymous()
    try:
        for collection in ("lost", "expiring", "frozen"):
            assert secured_search(client, collection, "select", {"q": "x"}, access) == {"response": {}}
            assert SEEN[f"/solr/{collection}/select"] == len(RESEND_PAUSES) + 1
        with pytest.raises(SolrError) as refused:
            secured_search(client, "forbidden", "select", {"q": "x"}, access)
        assert refused.value.status == 403 and not refused.value.transient
        assert SEEN["/solr/forbidden/select"] == 1
    finally:
        server.shutdown()
