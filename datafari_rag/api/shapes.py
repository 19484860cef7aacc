"""Request bodies declared once, as pydantic models: a view reads its body with :func:`read` (a
refusal is Datafari's error JSON, naming the field and what it must be), and the OpenAPI
document takes each body's schema from the same model (:func:`components`), so the two cannot
differ. A policy the model cannot state (a configured minimum, a name taken) stays with the
store that owns it."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema

from ..errors import DatafariError
from .body import json_object

S = TypeVar("S", bound="Shape")
USERNAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$"
# The sign-in's fields: documented as text, but anything is taken, so that a wrong type is
# answered like a wrong password (``loginFailed``), which tells a caller nothing.
AnyText = Annotated[Any, WithJsonSchema({"type": "string"})]


class Shape(BaseModel):
    """A JSON object with exactly these fields, each of exactly its type (no coercion)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Login(Shape):
    model_config = ConfigDict(extra="ignore", strict=True)

    username: AnyText
    password: AnyText


class NewUser(Shape):
    username: str = Field(pattern=USERNAME_PATTERN)
    password: str = Field(min_length=8, max_length=1024)
    admin: bool = False


class UserChange(Shape):
    password: str | None = Field(default=None, min_length=8, max_length=1024)
    admin: bool | None = None


Title = Annotated[str, Field(min_length=1, max_length=200, pattern=r"\S")]  # not only spaces


class NewConversation(Shape):
    title: Title | None = None


class ConversationTitle(Shape):
    title: Title


class IndexJobRequest(Shape):
    # each document is checked on its own (a bad one fails alone): any item is taken here
    documents: Annotated[
        list[Any], Field(min_length=1), WithJsonSchema({"type": "array", "items": {"type": "object"}, "minItems": 1})
    ]
    workflow: str | None = None
    callback: str | None = None


SettingValue = str | int | float | bool | None  # null: back to the properties file's value


class SettingsChange(Shape):
    values: dict[str, SettingValue] = Field(min_length=1)


# every body shape, by the name the OpenAPI document gives it
SHAPES: tuple[type[Shape], ...] = (
    Login,
    NewUser,
    UserChange,
    NewConversation,
    ConversationTitle,
    IndexJobRequest,
    SettingsChange,
)


def read(model: type[S], label: str) -> S:
    """The request's JSON body as ``model``, or :class:`DatafariError` with ``label``."""
    body = json_object(label)
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise DatafariError(label, refusal(exc)) from None


def refusal(exc: ValidationError) -> str:
    """What was wrong with a body, in a sentence per field (unknown fields together)."""
    unknown = sorted(str(e["loc"][0]) for e in exc.errors() if e["type"] == "extra_forbidden")
    said = [f"Unknown field(s): {', '.join(unknown)}."] if unknown else []
    for error in exc.errors():
        if error["type"] != "extra_forbidden":
            said.append(_sentence(error))
    return " ".join(dict.fromkeys(said))


# what each kind of pydantic error says, with the field's name and the error's context
SENTENCES = {
    "missing": "'{name}' is required.",
    "bool_type": "'{name}' is true or false.",
    "string_type": "'{name}' is text.",
    "int_type": "'{name}' is a whole number.",
    "int_from_float": "'{name}' is a whole number.",
    "list_type": "'{name}' is a list.",
    "dict_type": "'{name}' is an object.",
    "too_short": "'{name}' holds at least {min_length} item{min_s}.",
    "string_too_short": "'{name}' has at least {min_length} character{min_s}.",
    "string_too_long": "'{name}' has at most {max_length} character{max_s}.",
    "string_pattern_mismatch": "'{name}' does not have the expected form ({pattern}).",
}


def _sentence(error: Any) -> str:
    name = ".".join(str(part) for part in error["loc"]) or "the body"
    template = SENTENCES.get(error["type"])
    if template is None:
        return f"'{name}': {error['msg']}."
    ctx = dict(error.get("ctx") or {})
    for bound in ("min", "max"):  # "1 character", "8 characters"
        ctx[f"{bound}_s"] = "" if ctx.get(f"{bound}_length") == 1 else "s"
    return template.format(name=name, **ctx)


def components() -> dict[str, Any]:
    """The OpenAPI schemas of every shape, named as the classes."""
    return {model.__name__: _untitled(model.model_json_schema()) for model in SHAPES}


def _untitled(schema: Any) -> Any:
    """The schema without pydantic's ``title`` annotations (a property named ``title`` stays)."""
    if isinstance(schema, dict):
        return {k: _untitled(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_untitled(v) for v in schema]
    return schema
