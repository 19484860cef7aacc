"""CONTRIBUTING.md's "Add an endpoint", followed: a view declared with ``@endpoint`` (its body a
shape, its answer a TypedDict, its refusals), a new error label, the blueprint registered — and
the OpenAPI document, the identity check and Datafari's error JSON come by themselves."""

from __future__ import annotations

import pytest
from flask import Blueprint, Response
from pydantic import Field
from typing_extensions import TypedDict

from datafari_rag.api.http import shapes
from datafari_rag.api.http.auth import current_access
from datafari_rag.api.http.contract import endpoint, json, refusals
from datafari_rag.api.http.errors import ok_content
from datafari_rag.api.http.openapi import document
from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.errors import LABELS, Label


class Greeting(shapes.Shape):
    """Step 1: the body, a shape."""

    name: str = Field(min_length=1, max_length=50)


class Greeted(TypedDict):
    """Step 1: what it answers."""

    greeting: str


bp = Blueprint("greetings", __name__)


@bp.post("/greetings")
@endpoint("Greet someone, as the caller", {200: json(Greeted, "the greeting"), **refusals(400, 401, 415)}, Greeting)
def greet() -> tuple[Response, int]:
    body = shapes.read(Greeting, "greetingBadRequest")
    return ok_content({"greeting": f"Hello {body.name}, from {current_access().username or 'anonymous'}"}), 200


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setitem(LABELS, "greetingBadRequest", Label(400, "The greeting cannot be made."))  # step 2
    monkeypatch.setitem(shapes.__dict__, "SHAPES", (*shapes.SHAPES, Greeting))
    app = create_app(Settings())
    app.register_blueprint(bp, url_prefix=Settings().api_prefix)  # app.py's line for the new group
    return app


def test_a_new_endpoint_is_documented_checked_and_refused_as_every_other(app) -> None:  # type: ignore[no-untyped-def]
    operation = document(app, 4000)["paths"]["/Datafari/rest/v2.0/greetings"]["post"]
    assert operation["summary"] == "Greet someone, as the caller"
    assert set(operation["responses"]) == {"200", "400", "401", "415"}
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/Greeting"}
    client = app.test_client()
    said = client.post("/Datafari/rest/v2.0/greetings", json={"name": "Ada"}).get_json()
    assert said["status"] == "OK" and said["content"]["greeting"] == "Hello Ada, from anonymous"
    refused = client.post("/Datafari/rest/v2.0/greetings", json={"name": "", "colour": "red"})
    error = refused.get_json()["content"]["error"]
    assert refused.status_code == 400 and error["label"] == "greetingBadRequest"
    assert error["reason"] == "Unknown field(s): colour. 'name' has at least 1 character."
    assert client.post("/Datafari/rest/v2.0/greetings", data="name=Ada").status_code == 415
