"""Hostile input gets Datafari's error JSON with a 4xx code, never a 5xx, an HTML page or a trace.

The app runs in-process with a Solr that is not there: every case here is refused before Solr is
asked (a case that reached Solr would answer a technical error, which the tests would see)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.testing.servers import free_port, served_sidecar

API = "/Datafari/rest/v2.0"
DEAD_SOLR = "http://127.0.0.1:9/solr"


@pytest.fixture(scope="module")
def client() -> FlaskClient:
    settings = Settings(solr_url=DEAD_SOLR, update_trust_local=True, max_body_size=1024 * 1024)
    return create_app(settings).test_client()


def error_of(response: Any) -> dict[str, Any]:
    """The error of Datafari's JSON, 7.0's (its code a string), or 7.0's NDJSON stream."""
    assert response.status_code < 500, response.get_data()[:300]
    assert "Traceback" not in response.get_data(as_text=True)
    if response.mimetype == "application/x-ndjson":  # ai/stream refuses in its own format
        events = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
        assert [e["type"] for e in events] == ["stream.started", "error", "stream.completed"], events
        error = events[1]["data"]
    else:
        assert response.mimetype == "application/json", response.get_data()[:300]
        body = response.get_json()
        assert body["status"] == "ERROR", body
        error = body["content"]["error"]
    assert 400 <= int(error["code"]) < 500, error
    return error


JSON_PATHS = ["/ai/rag", "/ai/stream", "/ai/summarize", "/ai"]
# Datafari 6.2's endpoints refuse with 422 (ragBadRequest…), 7.0's with 400 (aiBadRequest)
BAD_REQUEST_CODE = {"/ai/stream": 400, "/ai": 400}


@pytest.mark.parametrize("path", [*(API + p for p in JSON_PATHS), "/update", f"{API}/update"])
def test_deeply_nested_json(client: FlaskClient, path: str) -> None:
    body = b"[" * 100_000 + b"]" * 100_000
    error = error_of(client.post(path, data=body, content_type="application/json"))
    assert "nested" in error["reason"]


@pytest.mark.parametrize("path", [API + p for p in JSON_PATHS])
@pytest.mark.parametrize(
    "body",
    [
        b'{"query": "\\ud800", "id": "x"}',
        b'{"query": "ok", "id": "\\udfff"}',
        b'{"query": "ok", "history": [{"role": "user", "content": "\\ud83d"}]}',
    ],
)
def test_a_lone_surrogate_is_refused(client: FlaskClient, path: str, body: bytes) -> None:
    assert "surrogate" in error_of(client.post(path, data=body, content_type="application/json"))["reason"]


def test_a_lone_surrogate_in_ids_to_delete_is_refused(client: FlaskClient) -> None:
    assert error_of(client.post("/update", data=b'{"delete": {"id": "\\ud800"}}'))["label"] == "updateBadRequest"


@pytest.mark.parametrize("path", [*(API + p for p in JSON_PATHS), "/update"])
def test_a_body_over_the_limit_is_refused_unread(client: FlaskClient, path: str) -> None:
    response = client.post(path, data=b"x" * (2 * 1024 * 1024), content_type="application/json")
    assert response.status_code == 413 and error_of(response)["label"] == "requestTooLarge"


@pytest.mark.parametrize("body", [b"", b"not json", b"\xff\xfe", b"[1, 2]", b'"text"', b"null"])
def test_bodies_that_are_not_an_object(client: FlaskClient, body: bytes) -> None:
    for path in JSON_PATHS:
        code = error_of(client.post(API + path, data=body, content_type="application/json"))["code"]
        assert int(code) == BAD_REQUEST_CODE.get(path, 422)


def test_double_slashes_are_not_found_not_redirected(client: FlaskClient) -> None:
    response = client.post(f"/{API}/ai/rag", json={"query": "x"})
    assert response.status_code == 404 and error_of(response)["label"] == "notFound"


def test_every_answer_carries_a_request_id(client: FlaskClient) -> None:
    mine = client.post(f"{API}/ai/rag", data=b"{", headers={"X-Request-ID": "abc-123"})
    assert mine.headers["X-Request-ID"] == "abc-123"
    made = client.post(f"{API}/ai/rag", data=b"{", headers={"X-Request-ID": "bad id <script>"})
    assert made.headers["X-Request-ID"] not in ("", "bad id <script>") and len(made.headers["X-Request-ID"]) == 32


def test_a_technical_error_names_no_internal_address(client: FlaskClient) -> None:
    response = client.post(f"{API}/ai/rag", json={"query": "anything"})
    body = response.get_json()
    assert body["content"]["error"]["label"] == "ragTechnicalError"
    assert "127.0.0.1" not in response.get_data(as_text=True) and ":9" not in body["content"]["error"]["reason"]


@pytest.fixture(scope="module")
def gunicorn_sidecar() -> Iterator[tuple[str, int]]:
    """The sidecar as production serves it, for the requests gunicorn refuses by itself."""
    port = free_port()
    with served_sidecar(Settings(solr_url=DEAD_SOLR), port):
        yield "127.0.0.1", port


def raw_request(address: tuple[str, int], data: bytes) -> bytes:
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        (b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n", 431),
        (b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(200)) + b"\r\n", 431),
        (b"NOT A REQUEST\r\n\r\n", 400),
    ],
)
def test_requests_gunicorn_refuses_get_json_too(
    gunicorn_sidecar: tuple[str, int], request_bytes: bytes, status: int
) -> None:
    answer = raw_request(gunicorn_sidecar, request_bytes)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {status}".encode()), head
    assert b"Content-Type: application/json" in head and b"<html" not in answer
    import json

    error = json.loads(body)["content"]["error"]
    assert error["code"] == status and error["label"]


@pytest.mark.parametrize("path", [*JSON_PATHS, "/auth/login"])
@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None]
)
def test_a_json_body_not_sent_as_json_is_415_before_it_is_read(
    client: FlaskClient, path: str, content_type: str | None
) -> None:
    """A browser sends text/plain and form posts cross-site without asking (no CORS preflight):
    read as JSON they would act on the API for whoever's cookie a proxy adds. Refused, typed or not."""
    body = json.dumps({"query": "x", "username": "a", "password": "b", "id": "d"})
    headers = {"Content-Type": content_type} if content_type else {}
    error = error_of(client.post(API + path, data=body, headers=headers))
    # 7.0's AI API answers its refusals with 400, as for every bad request
    assert error["label"] == "unsupportedMediaType", (path, content_type, error)
    assert int(error["code"]) in (415, BAD_REQUEST_CODE.get(path, 415)), (path, error)
    # the same body sent as JSON gets past the type check (refused later for its own reasons, or run)
    sent = client.post(API + path, data=body, content_type="application/json; charset=utf-8")
    assert sent.status_code != 415
