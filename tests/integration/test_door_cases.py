"""The door's rule as the shared table of cases (``solr_config/door_cases.json``, also run by the
plugin's ``DoorCasesTest``): each case straight to FileShare's ``/select`` of a secured Solr as an
anonymous client, and, where ``search/select`` takes its parameters, through the sidecar, which
hands them to the same door: accepted or refused as the table says, both ways."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import urllib3
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr.bootstrap import BootstrapReport
from datafari_rag.testing.acl_harness import API

CASES = json.loads((Path(__file__).parents[2] / "solr_config" / "door_cases.json").read_text())["cases"]
# what search/select takes from a client (its own API; the door judges the values)
SIDECAR = {"q", "fq", "facet", "facet.field", "facet.query", "facet.mincount", "sort", "fl"}


def label(case: dict[str, Any]) -> str:
    return f"{case['why']}: {case['params']}"


@pytest.fixture(scope="module")
def sidecar(settings: Settings, bootstrapped: BootstrapReport) -> FlaskClient:
    return create_app(settings).test_client()


def with_q(case: dict[str, Any]) -> list[tuple[str, str]]:
    params = [(name, value) for name, value in case["params"]]
    return params if any(name == "q" for name, _ in params) else [("q", "*:*"), *params]


@pytest.mark.parametrize("case", CASES, ids=label)
def test_each_case_straight_to_solr(settings: Settings, bootstrapped: BootstrapReport, case: dict[str, Any]) -> None:
    """As an anonymous network client (no credentials)."""
    url = f"{settings.solr_url}/{settings.collection_main}/select"
    answer = urllib3.request("GET", url, fields=with_q(case), timeout=60, retries=False)
    assert answer.status == (200 if case["accepted"] else 400), answer.data[:400]


@pytest.mark.parametrize("case", [c for c in CASES if {n for n, _ in c["params"]} <= SIDECAR], ids=label)
def test_each_case_through_the_sidecar(sidecar: FlaskClient, case: dict[str, Any]) -> None:
    body = sidecar.get(f"{API}/search/select", query_string=with_q(case)).get_json()
    if case["accepted"]:
        assert "response" in body, body
    else:
        assert body["status"] == "ERROR" and body["content"]["error"]["label"] == "ragBadRequest", body


def test_the_table_reaches_both_sides_of_the_rule_through_the_sidecar() -> None:
    sendable = [c for c in CASES if {n for n, _ in c["params"]} <= SIDECAR]
    assert sum(c["accepted"] for c in sendable) >= 10 and sum(not c["accepted"] for c in sendable) >= 15
