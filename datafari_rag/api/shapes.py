"""Request bodies declared once, as pydantic models: a view reads its body with :func:`read` (a
refusal is Datafari's error JSON, naming the field and what it must be), and the OpenAPI
document takes each body's schema from the same model (:func:`components`), so the two cannot
differ. A policy the model cannot state (a configured minimum, a name taken) stays with the
store that owns it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, ValidationInfo, WithJsonSchema

from ..config import Settings
from ..errors import DatafariError
from ..filters import FIELDS as FILTER_FIELDS
from ..prompts import FORMATS, LANGUAGES
from ..prompts.overrides import MAX_TEMPLATE_CHARS, OVERRIDABLE, TemplateError, checked_templates
from ..rag.pipeline import RagRequest
from ..registry import RETRIEVAL_MODES, STRATEGIES
from .body import json_object
from .chat_core import MAX_TOP_K, chat_core_fields
from .validation import (
    MAX_HISTORY,
    MAX_ID_CHARS,
    MAX_TAGS,
    ROLES,
    SEARCH_TYPES,
    TAG_NAME,
    parse_format,
    parse_history,
    parse_id,
    parse_lang,
    parse_prompt,
    parse_query,
    parse_search_type,
)

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


# chat-core's per-room system prompt: what every answer of the conversation follows
Instructions = Annotated[str, Field(max_length=4000)]


def _prompts(value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    try:
        return checked_templates(value, "'prompts'", plain=True)  # any signed-in user writes them
    except TemplateError as exc:
        raise DatafariError("conversationBadRequest", str(exc)) from None


PROMPTS_SCHEMA = {
    "type": "object",
    "propertyNames": {"enum": list(OVERRIDABLE)},
    "additionalProperties": {"type": "string", "minLength": 1, "maxLength": MAX_TEMPLATE_CHARS},
    "description": "prompt name: jinja2 text (without blocks: the instructions)",
}
# chat-core's per-room prompts: answer prompts replaced for one conversation (prompts/overrides.py)
RoomTemplates = Annotated[
    Any,
    BeforeValidator(_prompts),
    WithJsonSchema(PROMPTS_SCHEMA),
]


class NewConversation(Shape):
    title: Title | None = None
    instructions: Instructions = ""
    prompts: RoomTemplates = None


class ConversationChange(Shape):
    """A new title, new instructions ("" removes them), new prompts ({} removes them), or several."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"minProperties": 1})

    title: Title | None = None
    instructions: Instructions | None = None
    prompts: RoomTemplates = None


class AnswerRating(Shape):
    rating: Literal["up", "down"]
    comment: str = Field(default="", max_length=2000)


class IndexJobRequest(Shape):
    # each document is checked on its own (a bad one fails alone): any item is taken here
    documents: Annotated[
        list[Any], Field(min_length=1), WithJsonSchema({"type": "array", "items": {"type": "object"}, "minItems": 1})
    ]
    workflow: str | None = None
    callback: str | None = None
    # who may read the documents that carry no ACL field: private (the writer only), public, group:<token>
    visibility: str | None = Field(default=None, max_length=300)


SettingValue = str | int | float | bool | None  # null: back to the properties file's value


class SettingsChange(Shape):
    values: dict[str, SettingValue] = Field(min_length=1)


class PreferencesChange(Shape):
    """DatafariUI's ``PUT v1.0/users/current``: a language tag (``fr``, ``pt_br``) or a layout."""

    lang: str | None = Field(default=None, pattern=r"^[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8}){0,2}$", max_length=16)
    uiConfig: dict[str, Any] | None = Field(default=None, max_length=100)


class SavedSearchBody(Shape):
    """DatafariUI's saved search: its name and the search page's query string."""

    name: str = Field(min_length=1, max_length=200, pattern=r"^[^/]*[^/\s][^/]*$")  # it names the search in URLs
    search: str = Field(max_length=8000)
    keyword: str | None = Field(default=None, max_length=4000)


class AlertBody(Shape):
    """DatafariUI's alert. ``_id`` and ``user`` come back from a read and are not used: the owner
    is the request's identity, the alert the one the URL names."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    subject: str = Field(default="", max_length=200)
    keyword: str = Field(default="*:*", max_length=4000)
    filters: str = Field(default="", max_length=8000)
    core: Literal["FileShare"] = "FileShare"
    mail: str = Field(default="", max_length=320, pattern=r"^$|^[^@\s]+@[^@\s]+$")
    frequency: Literal["hourly", "daily", "weekly"] = "daily"
    id_: str | None = Field(default=None, alias="_id", max_length=36)
    user: str | None = Field(default=None, max_length=255)
    lastRun: str | None = None
    nextRun: str | None = None


AnId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]


class AssistantConversation(Shape):
    """Datafari 7.0's new conversation: its basket may start as a copy of another of the user's."""

    sourceConversationId: AnId | None = None


class AssistantRename(Shape):
    conversationId: AnId
    title: Title


class BasketDocumentBody(Shape):
    """A document put in a conversation's basket (the latest conversation, or a new one, when
    ``conversationId`` is absent)."""

    docId: AnId
    docTitle: str = Field(min_length=1, max_length=500)
    conversationId: AnId | None = None


class AssistantMessage(Shape):
    """A message of Datafari 7.0's assistant kept in a conversation (a new one when
    ``conversationId`` is absent)."""

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1, max_length=100_000)
    conversationId: AnId | None = None


class NewApiKey(Shape):
    name: str = Field(default="", max_length=100)
    username: str | None = None  # default: the administrator creating it


@dataclass(frozen=True)
class Reading:
    """What the answer bodies' checks need: the refusal's label, the configured longest query."""

    label: str
    max_query: int


# The configured longest query: the document writes ``query.max.length``'s value here.
MAX_QUERY = "{query.max.length}"
QUESTION = {"type": "string", "minLength": 1, "maxLength": MAX_QUERY}


def _reading(info: ValidationInfo) -> Reading:
    if not isinstance(info.context, Reading):  # a programming error, never a client's
        raise TypeError("an answer body is validated with its Reading as the context")
    return info.context


def _query(value: Any, info: ValidationInfo) -> str:
    return parse_query(value, _reading(info).max_query)


def _prompt(value: Any, info: ValidationInfo) -> str | None:
    return parse_prompt(value, _reading(info).max_query)


def _id(value: Any, info: ValidationInfo) -> str | None:
    return parse_id(value, _reading(info).label)


def _lang(value: Any, info: ValidationInfo) -> str | None:
    return parse_lang(value, _reading(info).label)


def _format(value: Any, info: ValidationInfo) -> str | None:
    return parse_format(value)


def _history(value: Any, info: ValidationInfo) -> list[dict[str, str]]:
    return parse_history(value, _reading(info).label)


def _search_type(value: Any, info: ValidationInfo) -> str:
    return parse_search_type(value, _reading(info).label)


TAG = {"type": "string", "pattern": TAG_NAME.pattern}
MESSAGE_EXTRAS_SCHEMA: dict[str, Any] = {
    "block_class": {**TAG, "description": "chat-core: the UI block's class (chat.history.blockClasses)"},
    "metadata": {
        "type": "object",
        "maxProperties": MAX_TAGS,
        "propertyNames": TAG,
        "additionalProperties": {"type": ["string", "number", "boolean"]},
    },
    "tool_calls": {"type": "array", "description": "an assistant's tool calls (pruned from prompts)"},
    "tool_call_id": {"type": "string", "maxLength": 200},
    "name": {"type": "string", "maxLength": 200},
}


def _history_schema(text: str) -> dict[str, Any]:
    item = {"role": {"enum": list(ROLES)}, text: {"type": "string"}, **MESSAGE_EXTRAS_SCHEMA}
    return {
        "type": "array",
        "maxItems": MAX_HISTORY,
        "items": {"type": "object", "properties": item, "required": ["role", text], "additionalProperties": False},
    }


# Fields checked by validation.py's parsers (their DatafariError is the refusal, with the label
# of the body's Reading), documented by the schema beside them.
Question = Annotated[Any, BeforeValidator(_query), WithJsonSchema(QUESTION)]
Prompt = Annotated[
    Any,
    BeforeValidator(_prompt),
    WithJsonSchema({**QUESTION, "description": "Datafari 6.1: the question the LLM answers; query is searched"}),
]
DocId = Annotated[
    Any, BeforeValidator(_id), WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS})
]
LANG_SCHEMA = {"type": "string", "enum": sorted(LANGUAGES), "description": "ISO 639-1 answer language"}
Lang = Annotated[Any, BeforeValidator(_lang), WithJsonSchema(LANG_SCHEMA)]
FORMAT_SCHEMA = {"type": "string", "enum": ["default", *sorted(FORMATS)]}
Format = Annotated[Any, BeforeValidator(_format), WithJsonSchema(FORMAT_SCHEMA)]
History = Annotated[Any, BeforeValidator(_history), WithJsonSchema(_history_schema("content"))]
SearchType = Annotated[
    Any,
    BeforeValidator(_search_type),
    WithJsonSchema({"enum": list(SEARCH_TYPES), "description": "chat-core's modes"}),
]
# checked with the turn's store (api/conversations.py conversation_id): documented here
ConversationRef = Annotated[
    Any,
    WithJsonSchema({"type": "string", "maxLength": MAX_ID_CHARS, "description": "a conversation kept on the server"}),
]
Filters = Annotated[
    Any,
    WithJsonSchema(
        {
            "type": "object",
            "description": "field -> values; fields: " + ", ".join(FILTER_FIELDS),
            "additionalProperties": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        }
    ),
]


# chat-core's request fields (api/chat_core.py checks them; documented here)
CHAT_CORE_SCHEMAS: dict[str, dict[str, Any]] = {
    "collection_name": {"type": "string", "description": "the collection searched, or an alias of it"},
    "metadata_filter_key": {"enum": list(FILTER_FIELDS), "description": "a field whose values narrow the sources"},
    "metadata_filter_values": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 1000},
    "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K},
    "temperature": {"type": "number", "minimum": 0, "maximum": 2},
    "use_paragraph": {"type": "boolean", "description": "false: each retrieved text whole"},
    "is_test": {"type": "boolean", "description": "true: the answer is kept nowhere"},
    "user_id": {"type": "string", "maxLength": 200, "description": "read, never trusted: the caller's identity counts"},
    "history_filter": {
        "type": "object",
        "properties": {
            "block_classes": {"type": "array", "items": TAG, "maxItems": MAX_TAGS},
            "metadata": {
                "type": "object",
                "maxProperties": MAX_TAGS,
                "propertyNames": TAG,
                "additionalProperties": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            },
        },
        "additionalProperties": False,
        "description": "the history messages that reach the prompt (narrows chat.history.blockClasses)",
    },
}

ChatCoreCollectionName = Annotated[Any, WithJsonSchema(CHAT_CORE_SCHEMAS["collection_name"])]
ChatCoreMetadataFilterKey = Annotated[Any, WithJsonSchema(CHAT_CORE_SCHEMAS["metadata_filter_key"])]
ChatCoreMetadataFilterValues = Annotated[Any, WithJsonSchema(CHAT_CORE_SCHEMAS["metadata_filter_values"])]
ChatCoreTopK = Annotated[Any, WithJsonSchema(CHAT_CORE_SCHEMAS["top_k"])]
ChatCoreTemperature = Annotated[Any, WithJsonSchema(CHAT_CORE_SCHEMAS["temperature"])]
ChatCoreUseParagraph = Annotated[Any, WithJsonSchema(CHAT_CORE_SCHEMAS["use_paragraph"])]
ChatCoreIsTest = Annotated[Any, WithJsonSchema(CHAT_CORE_SCHEMAS["is_test"])]
ChatCoreUserId = Annotated[Any, WithJsonSchema(CHAT_CORE_SCHEMAS["user_id"])]
ChatCoreHistoryFilter = Annotated[Any, WithJsonSchema(CHAT_CORE_SCHEMAS["history_filter"])]


class ChatCoreShape(Shape):
    """chat-core's request fields, shared by the bodies that answer it (``api/chat_core.py``)."""

    collection_name: ChatCoreCollectionName = None
    metadata_filter_key: ChatCoreMetadataFilterKey = None
    metadata_filter_values: ChatCoreMetadataFilterValues = None
    top_k: ChatCoreTopK = None
    temperature: ChatCoreTemperature = None
    use_paragraph: ChatCoreUseParagraph = None
    is_test: ChatCoreIsTest = None
    user_id: ChatCoreUserId = None
    history_filter: ChatCoreHistoryFilter = None


class RagBody(ChatCoreShape):
    # a missing query, history or search_type gets its parser's own sentence (validate_default)
    """The body of ``ai/rag`` and ``ai/stream`` (Datafari 6.1/6.2); other fields are ignored."""

    model_config = ConfigDict(extra="ignore", json_schema_extra={"required": ["query"]})

    query: Question = Field(default=None, validate_default=True)
    id: DocId = None
    lang: Lang = None
    history: History = Field(default=None, validate_default=True)
    format: Format = None
    prompt: Prompt = None
    search_type: SearchType = Field(default=None, validate_default=True)
    conversationId: ConversationRef = None
    room_id: ConversationRef = None


class WorkflowQuery(RagBody):
    """``ai/rag``'s body and Datafari 7.0's ``filters``, which narrow the workflow's."""

    filters: Filters = None


class SummarizeBody(Shape):
    model_config = ConfigDict(extra="ignore", json_schema_extra={"required": ["id"]})

    id: DocId = None
    lang: Lang = None


class AiBody(ChatCoreShape):
    """Datafari 7.0's AiRequest (and the 6.x fields ``ai/stream`` shares); what each action needs
    is checked by ``api/ai.py``."""

    model_config = ConfigDict(extra="forbid", strict=False)

    query: Annotated[Any, WithJsonSchema(QUESTION)] = None
    q: Annotated[Any, WithJsonSchema(QUESTION)] = None
    action: Annotated[Any, WithJsonSchema({"enum": ["rag", "summarize", "search", "agentic"]})] = None
    id: Annotated[Any, WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS})] = None
    lang: Annotated[Any, WithJsonSchema(LANG_SCHEMA)] = None
    format: Annotated[Any, WithJsonSchema(FORMAT_SCHEMA)] = None
    history: Annotated[Any, WithJsonSchema(_history_schema("message"))] = None
    prompt: Annotated[Any, WithJsonSchema(QUESTION)] = None
    filters: Filters = None
    agent: Annotated[Any, WithJsonSchema({"type": "string"})] = None
    conversationId: ConversationRef = None
    room_id: ConversationRef = None
    search_type: Annotated[Any, WithJsonSchema({"enum": list(SEARCH_TYPES)})] = None
    memoryId: Annotated[Any, WithJsonSchema({"type": "string", "maxLength": 200})] = None


class WorkflowBody(Shape):
    """A workflow: its retrieval, strategy, prompt and stages (docs/workflows.md); every field is
    checked by ``workflows/spec.py`` ``parse_workflow``, whose field list this must equal
    (``tests/test_contract.py``)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"required": ["name"]})

    name: Annotated[Any, WithJsonSchema({"type": "string", "minLength": 1, "maxLength": 100})] = None
    description: Annotated[Any, WithJsonSchema({"type": "string", "maxLength": 500})] = None
    retrieval: Annotated[
        Any, WithJsonSchema({"enum": list(RETRIEVAL_MODES.names), "description": RETRIEVAL_MODES.help()})
    ] = None
    strategy: Annotated[Any, WithJsonSchema({"enum": list(STRATEGIES.names), "description": STRATEGIES.help()})] = None
    parentChild: Annotated[Any, WithJsonSchema({"type": "boolean"})] = None
    instructions: Annotated[Any, WithJsonSchema({"type": "string", "maxLength": 4000})] = None
    prompts: Annotated[Any, WithJsonSchema(PROMPTS_SCHEMA)] = None
    chunker: Annotated[Any, WithJsonSchema({"type": "object"})] = None
    queryEnhancers: Annotated[Any, WithJsonSchema({"type": "array", "items": {"type": "object"}})] = None
    filters: Filters = None
    ranker: Annotated[Any, WithJsonSchema({"oneOf": [{"type": "null"}, {"type": "object"}]})] = None
    collection: Annotated[
        Any, WithJsonSchema({"type": "string", "description": "its own <collection>_FileShare and _VectorMain"})
    ] = None
    default: Annotated[Any, WithJsonSchema({"type": "boolean"})] = None


def rag_request(body: dict[str, Any], settings: Settings, default_lang: str | None) -> tuple[RagRequest, bool]:
    """The body of ``POST ai/rag`` (or a workflow's query, ``settings`` its pipeline's) as the
    pipeline's request, with chat-core's fields; and whether the answer is kept (not ``is_test``)."""
    rag = RagBody.model_validate(body, context=Reading("ragBadRequest", settings.query_max_length))
    chat = chat_core_fields(body, "ragBadRequest", settings)
    request = RagRequest(
        query=rag.query,
        doc_id=rag.id,
        lang=rag.lang or default_lang,
        history=rag.history,
        format=rag.format,
        question=rag.prompt,
        mode=rag.search_type,
    )
    return chat.applied(request), not chat.is_test


# every body shape, by the name the OpenAPI document gives it
SHAPES: tuple[type[Shape], ...] = (
    Login,
    NewUser,
    UserChange,
    NewConversation,
    ConversationChange,
    AnswerRating,
    IndexJobRequest,
    SettingsChange,
    NewApiKey,
    PreferencesChange,
    AssistantConversation,
    AssistantRename,
    BasketDocumentBody,
    AssistantMessage,
    SavedSearchBody,
    AlertBody,
    RagBody,
    WorkflowQuery,
    SummarizeBody,
    AiBody,
    WorkflowBody,
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
    "literal_error": "'{name}' is one of {expected}.",
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
