"""What an endpoint takes and answers, declared on its view with :func:`endpoint`.

The OpenAPI document (``api/http/openapi.py``) is built from Flask's routes and these declarations:
paths and path parameters from the routes, bodies and answers from the models in ``shapes.py``
and ``answers.py``, query parameters from the same :class:`Param` lists the views check their
parameters against. A route without a declaration fails ``tests/test_contract.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .answers import Error

JSON = "application/json"
HTML = "text/html"
# A schema: a model class (a pydantic model or TypedDict, becoming a $ref to its component), a
# JSON schema, or a JSON schema holding model classes (``{"oneOf": [Ok, Error]}``).
Schema = Any
V = TypeVar("V", bound=Callable[..., Any])


@dataclass(frozen=True)
class Param:
    """A query (or header) parameter: its name, its JSON schema, what it means."""

    name: str
    schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "string"})
    description: str = ""
    required: bool = False
    repeatable: bool = False  # given several times (?fq=a&fq=b)
    where: str = "query"

    def openapi(self) -> dict[str, Any]:
        schema = {"type": "array", "items": dict(self.schema)} if self.repeatable else dict(self.schema)
        param = {"name": self.name, "in": self.where, "required": self.required, "schema": schema}
        if self.description:
            param["description"] = self.description
        return param | ({"style": "form", "explode": True} if self.repeatable else {})


def names(params: tuple[Param, ...]) -> set[str]:
    return {p.name for p in params}


@dataclass(frozen=True)
class Reply:
    """One answer of an endpoint: its meaning and its body per media type."""

    description: str
    content: Mapping[str, Schema] = field(default_factory=dict)


@dataclass(frozen=True)
class Contract:
    summary: str
    replies: Mapping[int, Reply]
    body: Mapping[str, Schema] | None = None  # per media type
    body_required: bool = True
    params: tuple[Param, ...] = ()
    public: bool = False  # answered without an identity


def endpoint(
    summary: str,
    replies: Mapping[int, Reply],
    body: Schema | Mapping[str, Schema] | None = None,
    params: tuple[Param, ...] = (),
    public: bool = False,
    body_required: bool = True,
) -> Callable[[V], V]:
    """Declares the view's contract; ``body``: a JSON body's schema, or one per media type."""
    media = body if isinstance(body, Mapping) and all("/" in str(k) for k in body) else None
    bodies = media if media is not None else (None if body is None else {JSON: body})
    contract = Contract(summary, replies, bodies, body_required, params, public)

    def declared(view: V) -> V:
        view.contract = contract  # type: ignore[attr-defined]
        return view

    return declared


def contract_of(view: Callable[..., Any]) -> Contract | None:
    return getattr(view, "contract", None)


def json(schema: Schema, description: str) -> Reply:
    return Reply(description, {JSON: schema})


def page(description: str) -> Reply:
    return Reply(description, {HTML: {}})


def refusals(*codes: int) -> dict[int, Reply]:
    """Datafari's error JSON with these HTTP statuses."""
    return {code: json(Error, "Datafari's error JSON") for code in codes}


REFUSALS = (400, 401, 403, 413, 415, 503)  # identity, authority, body size and type, a store down
CONVERSATION_REFUSALS = (404, 409)  # a conversationId that is not the user's; a full conversation
