"""schemathesis against GET /openapi.json, on the real app, a real Solr and the recording LLM stub:
no server error, no body that is not what the document says, every status documented.

Bounded: a few examples per operation. The app writes into collections of its own (``api_``), so
the generated documents of /update never reach other tests' collections."""

from __future__ import annotations

import json
import re

import jwt
import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from datafari_rag.api.datafari.search import RAG_SELECT_PARAMS, SEARCH_PARAMS, VECTOR_PARAMS
from datafari_rag.api.http.openapi import document
from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.fake_llm import FakeLlm

SECRET = "a-test-secret-that-is-long-enough-for-hs256"
AS_INDEXER = {"Authorization": "Bearer " + jwt.encode({"preferred_username": "indexer", "exp": 4102444800}, SECRET)}
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def api_app(solr: SolrClient, settings: Settings, fake_llm_server: tuple[FakeLlm, str]) -> Flask:
    mine = settings.replace(
        collection_main="api_FileShare",
        collection_vector="api_VectorMain",
        llm_endpoint=fake_llm_server[1],
        jwt_hs256_secret=SECRET,
        update_users="indexer",
    )
    bootstrap(solr, mine)
    app = create_app(mine)
    client = app.test_client()
    docs = [
        {"id": f"api-{i}", "title": f"Note {i}", "exactContent": f"Pump {i} needs a valve check."} for i in range(5)
    ]
    assert client.post("/update?commit=true", json=docs, headers=AS_INDEXER).get_json()["added"] == 5
    return app


@pytest.fixture(scope="module")
def api_schema(api_app: Flask) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_wsgi("/openapi.json", api_app)


OPERATIONS = [
    (path, method)
    for path, item in document(create_app(Settings()), Settings().query_max_length)["paths"].items()
    for method in item
]


@pytest.mark.parametrize(("path", "method"), OPERATIONS)
def test_every_operation_conforms(api_schema: schemathesis.BaseSchema, path: str, method: str) -> None:
    operation = api_schema[path][method]

    @given(case=operation.as_strategy())
    @settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
    def conforms(case: schemathesis.Case) -> None:
        response = case.call_and_validate(checks=CHECKS, headers=AS_INDEXER)  # may write: /update is exercised
        if response.headers.get("Content-Type", [""])[0].startswith("application/json"):
            json.loads(response.content)  # a JSON body that really is JSON

    conforms()


PREFIX = "/Datafari/rest/v2.0"
SUCCESSES = [
    (f"{PREFIX}/ai/rag", "post", {"body": {"query": "Which pump needs a valve check?"}}),
    (f"{PREFIX}/ai/stream", "post", {"body": {"query": "Which pump needs a valve check?"}}),
    (f"{PREFIX}/ai/summarize", "post", {"body": {"id": "api-1"}}),
    (f"{PREFIX}/search/select", "get", {"query": {"q": "pump valve", "fl": "id,title"}}),
    (f"{PREFIX}/search/select", "get", {"query": {"q": "pump valve", "action": "rag"}}),
    (f"{PREFIX}/search/vector", "get", {"query": {"queryrag": "pump valve", "topK": 3}}),
    ("/update", "post", {"body": [{"id": "api-9", "exactContent": "Pump 9 needs a valve check."}]}),
]


@pytest.mark.parametrize(("path", "method", "parts"), SUCCESSES)
def test_answers_that_succeed_conform_too(
    api_schema: schemathesis.BaseSchema, path: str, method: str, parts: dict
) -> None:
    """Random inputs mostly find nothing; these find something, and their answers are checked too."""
    response = api_schema[path][method].Case(**parts).call_and_validate(checks=CHECKS, headers=AS_INDEXER)
    assert response.status_code == 200 and b'"ERROR"' not in response.content, response.content[:300]


def test_the_document_names_every_parameter_the_views_accept(api_app: Flask) -> None:
    doc = api_app.test_client().get("/openapi.json").get_json()
    assert doc["openapi"] == "3.1.0"
    paths = doc["paths"]
    select = {p["name"] for p in paths["/Datafari/rest/v2.0/search/select"]["get"]["parameters"]}
    vector = {p["name"] for p in paths["/Datafari/rest/v2.0/search/vector"]["get"]["parameters"]}
    assert select == SEARCH_PARAMS | RAG_SELECT_PARAMS and vector == VECTOR_PARAMS
    routes = {rule.rule for rule in api_app.url_map.iter_rules() if rule.endpoint != "static"}
    assert routes == {re.sub(r"\{(\w+)\}", r"<\1>", path) for path in paths}
