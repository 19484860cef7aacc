"""The sidecar's log: JSON lines with the error's fields, and an error storm rate limited per label."""

from __future__ import annotations

import io
import json
import logging

import pytest

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.logs import RateLimit


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def record(label: str | None) -> logging.LogRecord:
    made = logging.LogRecord("datafari_rag", logging.ERROR, __file__, 1, "failed", None, None)
    if label is not None:
        made.label = label
    return made


def test_repeated_errors_of_a_label_are_limited_and_then_counted() -> None:
    clock = Clock()
    limit = RateLimit(5, 60, clock)
    storm = [limit.filter(record("ragTechnicalError")) for _ in range(1000)]
    assert storm.count(True) == 5  # the first five of the window
    assert [limit.filter(record("authenticationFailed")) for _ in range(3)] == [True] * 3  # its own count
    assert all(limit.filter(record(None)) for _ in range(50))  # records without a label always pass
    clock.now = 61  # the next window: the first one let through says how many were left out
    after = record("ragTechnicalError")
    assert limit.filter(after) and after.suppressed == 995 and "995 more" in after.getMessage()
    again = record("ragTechnicalError")
    assert limit.filter(again) and not hasattr(again, "suppressed")


def test_an_error_storm_writes_a_few_json_lines_with_the_errors_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    """200 refused requests in a row: 3 lines (logs.errorsPerLabel), each one JSON object with the
    request id, label, status, method and path."""
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    settings = Settings(solr_url="http://127.0.0.1:9/solr", logs_errors_per_label=3, anonymous_allowed=False)
    client = create_app(settings).test_client()
    for _ in range(200):
        assert client.get("/Datafari/rest/v2.0/search/select", query_string={"q": "x"}).status_code == 401
    lines = [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]
    refused = [line for line in lines if line.get("label") == "authenticationFailed"]
    assert len(refused) == 3, lines
    first = refused[0]
    assert first["level"] == "WARNING" and first["status"] == 401 and first["method"] == "GET"
    assert first["path"] == "/Datafari/rest/v2.0/search/select" and len(first["request_id"]) == 32
    assert first["time"] and "authenticationFailed" in first["message"]
