"""Request bodies declared once: the view's check and the OpenAPI schema come from one model."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from datafari_rag.api.http import shapes
from datafari_rag.api.http.openapi import document
from datafari_rag.api.http.shapes import SHAPES, ConversationChange, NewConversation, NewUser, UserChange, read
from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.errors import DatafariError


def refused(model: type[shapes.Shape], body: Any) -> str:
    with Flask(__name__).test_request_context(json=body), pytest.raises(DatafariError) as error:
        read(model, "userBadRequest")
    assert error.value.label == "userBadRequest"
    return str(error.value.reason)


def test_a_body_is_read_as_its_model() -> None:
    with Flask(__name__).test_request_context(json={"username": "bea", "password": "x" * 12}):
        user = read(NewUser, "userBadRequest")
    assert (user.username, user.admin) == ("bea", False)


@pytest.mark.parametrize(
    ("model", "body", "said"),
    [
        (NewUser, {"username": "bea", "password": "x" * 12, "role": "x", "zone": 1}, "Unknown field(s): role, zone."),
        (NewUser, {"password": "x" * 12}, "'username' is required."),
        (NewUser, {"username": "bad name", "password": "x" * 12}, "'username' does not have the expected form"),
        (NewUser, {"username": "bea", "password": "short"}, "'password' has at least 8 characters."),
        (NewUser, {"username": "bea", "password": "x" * 12, "admin": "yes"}, "'admin' is true or false."),
        (UserChange, {"admin": 1}, "'admin' is true or false."),
        (ConversationChange, {"title": "   "}, "'title' does not have the expected form"),
        (NewConversation, {"title": "x" * 201}, "'title' has at most 200 characters."),
        (NewConversation, {"title": 7}, "'title' is text."),
        (ConversationChange, {"title": ""}, "'title' has at least 1 character."),
    ],
)
def test_a_refusal_names_the_field_and_what_it_must_be(model: type[shapes.Shape], body: Any, said: str) -> None:
    assert said in refused(model, body)


def test_the_openapi_document_takes_every_shape_from_its_model() -> None:
    schemas = document(create_app(Settings()), 4000)["components"]["schemas"]
    for model in SHAPES:
        names = {field.alias or name for name, field in model.model_fields.items()}
        assert set(schemas[model.__name__]["properties"]) == names
    new_user = schemas["NewUser"]
    assert new_user["additionalProperties"] is False and new_user["required"] == ["username", "password"]
    assert new_user["properties"]["password"] == {"type": "string", "minLength": 8, "maxLength": 1024}
    assert "title" in schemas["ConversationChange"]["properties"]  # a property named title is kept


def test_every_body_a_view_reads_is_a_declared_shape() -> None:
    api = Path(shapes.__file__).parents[1]
    read_with = {m for p in api.rglob("*.py") for m in re.findall(r"\bread\((\w+),", p.read_text())}
    assert read_with <= {m.__name__ for m in SHAPES} and read_with


def test_the_conversation_a_body_names_is_checked_by_its_shape() -> None:
    """``conversationId`` or chat-core's ``room_id`` (a RoomRef), never both: the shape says so,
    the views only ask it (``conversation_of``), and RagBody holds the same rule."""
    assert shapes.conversation_of({"conversationId": "c-1", "query": "x"}, "ragBadRequest") == "c-1"
    room = shapes.conversation_of({"room_id": "support desk"}, "aiBadRequest")
    assert isinstance(room, shapes.RoomRef) and room == "support desk"
    assert shapes.conversation_of({"query": "x"}, "ragBadRequest") is None
    for body, said in [
        ({"conversationId": "a", "room_id": "b"}, "Give 'conversationId' or 'room_id', not both."),
        ({"conversationId": 7}, "'conversationId' must be a string of at most 200 characters."),
        ({"room_id": "bell\x07"}, "'room_id' must be printable and at most 200 characters."),
    ]:
        with pytest.raises(DatafariError) as refused:
            shapes.conversation_of(body, "aiBadRequest")
        assert refused.value.label == "aiBadRequest" and refused.value.reason == said
        with pytest.raises(DatafariError, match=r"conversationId|room_id"):
            shapes.RagBody.model_validate({"query": "x", **body}, context=shapes.Reading("ragBadRequest", 100))
