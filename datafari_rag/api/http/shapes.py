"""Request bodies declared once, as pydantic models: a view reads its body with :func:`read` (a
refusal is Datafari's error JSON, naming the field and what it must be), and the OpenAPI
document takes each body's schema from the same model (:func:`components`), so the two cannot
differ. A policy the model cannot state (a configured minimum, a name taken) stays with the
store that owns it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)

from ...config import Settings
from ...errors import DatafariError, refusal
from ...filters import FIELDS as FILTER_FIELDS
from ...filters import NO_FILTER, SourceFilter, source_filter
from ...prompts import FORMATS, LANGUAGES
from ...prompts.overrides import PROMPTS_SCHEMA, TemplateError, checked_templates
from ...rag.history import EVERY_MESSAGE
from ...rag.pipeline import RagRequest
from ...workflows.spec import WorkflowSpec
from . import chat_core as chat_rules
from .body import json_object
from .chat_core import MAX_TOP_K, ChatCoreFields
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
    """What the answer bodies' checks need: the refusal's label, the configured longest query, and
    the configuration answering them (what chat-core's ``collection_name`` may name)."""

    label: str
    max_query: int
    settings: Settings | None = None


# The configured longest query: the document writes ``query.max.length``'s value here.
MAX_QUERY = "{query.max.length}"
QUESTION = {"type": "string", "minLength": 1, "maxLength": MAX_QUERY}


def _reading(info: ValidationInfo) -> Reading:
    if not isinstance(info.context, Reading):  # a programming error, never a client's
        raise TypeError("an answer body is validated with its Reading as the context")
    return info.context


def _relabeled(label: str, check: Callable[[], Any]) -> Any:
    """``check()``, its refusal given the body's label (a parser answers with ``ragBadRequest``)."""
    try:
        return check()
    except DatafariError as exc:
        if exc.label == label:
            raise
        raise DatafariError(label, exc.reason) from None


def _query(value: Any, info: ValidationInfo) -> str:
    return _relabeled(_reading(info).label, lambda: parse_query(value, _reading(info).max_query))


def _prompt(value: Any, info: ValidationInfo) -> str | None:
    return _relabeled(_reading(info).label, lambda: parse_prompt(value, _reading(info).max_query))


def _id(value: Any, info: ValidationInfo) -> str | None:
    return parse_id(value, _reading(info).label)


def _lang(value: Any, info: ValidationInfo) -> str | None:
    return parse_lang(value, _reading(info).label)


def _format(value: Any, info: ValidationInfo) -> str | None:
    return _relabeled(_reading(info).label, lambda: parse_format(value))


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
CONVERSATION_MAX_CHARS = 200  # what Datafari 7.0 echoes; ours are UUIDs
ROOM_MAX_CHARS = 200  # a client's own room name (the conversation's client_ref)


class RoomRef(str):
    """chat-core's ``room_id``: one of the user's conversations by its id, or the client's own name
    for one (created at its first use, see ``ConversationStore.resolve_room``)."""


def _conversation(value: Any, info: ValidationInfo) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > CONVERSATION_MAX_CHARS:
        said = f"'conversationId' must be a string of at most {CONVERSATION_MAX_CHARS} characters."
        raise DatafariError(_reading(info).label, said)
    return value


def _room(value: Any, info: ValidationInfo) -> RoomRef | None:
    value = _conversation(value, info)
    if value is not None and (len(value) > ROOM_MAX_CHARS or not value.isprintable()):
        raise DatafariError(
            _reading(info).label, f"'room_id' must be printable and at most {ROOM_MAX_CHARS} characters."
        )
    return None if value is None else RoomRef(value)


# the conversation an answer belongs to; that it exists and is the user's is the store's to say
ConversationRef = Annotated[
    Any,
    BeforeValidator(_conversation),
    WithJsonSchema(
        {"type": "string", "maxLength": CONVERSATION_MAX_CHARS, "description": "a conversation kept on the server"}
    ),
]
RoomId = Annotated[
    Any,
    BeforeValidator(_room),
    WithJsonSchema({"type": "string", "maxLength": ROOM_MAX_CHARS, "description": "chat-core's room: an id or a name"}),
]


def _one_conversation(body: Any, info: ValidationInfo) -> Any:
    if isinstance(body, dict) and "conversationId" in body and "room_id" in body:
        raise DatafariError(_reading(info).label, "Give 'conversationId' or 'room_id', not both.")
    return body


class ConversationChoice(BaseModel):
    """The conversation a body's answer belongs to: ``conversationId`` (Datafari 7.0: an existing
    one) or ``room_id`` (chat-core: a :class:`RoomRef`), never both; the other fields are not its."""

    model_config = ConfigDict(extra="ignore")

    conversationId: ConversationRef = None
    room_id: RoomId = None
    _one = model_validator(mode="before")(_one_conversation)

    @property
    def chosen(self) -> str | None:
        return self.room_id if self.room_id is not None else self.conversationId


def conversation_of(body: dict[str, Any], label: str) -> str | None:
    """``conversationId`` or ``room_id`` (a :class:`RoomRef`) of a body, checked."""
    return ConversationChoice.model_validate(body, context=Reading(label, 0)).chosen


def _filters(value: Any, info: ValidationInfo) -> SourceFilter:
    try:
        return source_filter(value)
    except ValueError as exc:
        raise DatafariError(_reading(info).label, str(exc)) from None


Filters = Annotated[
    Any,
    BeforeValidator(_filters),
    WithJsonSchema(
        {
            "type": "object",
            "description": "field -> values; fields: " + ", ".join(FILTER_FIELDS),
            "additionalProperties": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        }
    ),
]


# chat-core's request fields (api/http/chat_core.py checks them; documented here)
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


def _rule(check: Callable[[Any, str], Any]) -> Callable[[Any, ValidationInfo], Any]:
    """``api/http/chat_core.py``'s ``check(value, label)`` as a field's validator."""
    return lambda value, info: check(value, _reading(info).label)


def _collection(value: Any, info: ValidationInfo) -> str | None:
    settings = _reading(info).settings
    if settings is None:  # a programming error, never a client's
        raise TypeError("a body with chat-core's collection_name is read with the settings it answers with")
    return chat_rules.collection_name(value, _reading(info).label, settings)


def _schema(name: str) -> WithJsonSchema:
    return WithJsonSchema(CHAT_CORE_SCHEMAS[name])


CollectionName = Annotated[Any, BeforeValidator(_collection), _schema("collection_name")]
MetadataFilterKey = Annotated[
    Any, BeforeValidator(_rule(chat_rules.metadata_filter_key)), _schema("metadata_filter_key")
]
MetadataFilterValues = Annotated[Any, _schema("metadata_filter_values")]  # checked with the key
TopK = Annotated[Any, BeforeValidator(_rule(chat_rules.top_k)), _schema("top_k")]
Temperature = Annotated[Any, BeforeValidator(_rule(chat_rules.temperature)), _schema("temperature")]
UseParagraph = Annotated[
    Any, BeforeValidator(_rule(partial(chat_rules.flag, "use_paragraph"))), _schema("use_paragraph")
]
IsTest = Annotated[Any, BeforeValidator(_rule(partial(chat_rules.flag, "is_test"))), _schema("is_test")]
UserId = Annotated[Any, BeforeValidator(_rule(chat_rules.user_id)), _schema("user_id")]
HistoryFilterField = Annotated[Any, BeforeValidator(_rule(chat_rules.history_filter)), _schema("history_filter")]


class ChatCoreShape(Shape):
    """chat-core's request fields, shared by the bodies that answer it, each checked by
    ``api/http/chat_core.py``'s rule for it; :meth:`chat_core` gives what they ask of the answer."""

    collection_name: CollectionName = None
    metadata_filter_key: MetadataFilterKey = None
    metadata_filter_values: MetadataFilterValues = None
    top_k: TopK = None
    temperature: Temperature = None
    use_paragraph: UseParagraph = None
    is_test: IsTest = None
    user_id: UserId = None
    history_filter: HistoryFilterField = None
    _metadata: SourceFilter = PrivateAttr(default=NO_FILTER)  # the metadata filter, once checked

    @model_validator(mode="after")
    def _metadata_filter(self, info: ValidationInfo) -> ChatCoreShape:
        label = _reading(info).label
        self._metadata = chat_rules.metadata_filter(self.metadata_filter_key, self.metadata_filter_values, label)
        return self

    def chat_core(self) -> ChatCoreFields:
        return ChatCoreFields(
            self._metadata,
            self.top_k,
            self.temperature,
            whole_documents=self.use_paragraph is False,
            is_test=self.is_test is True,
            history_filter=self.history_filter if self.history_filter is not None else EVERY_MESSAGE,
        )


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
    room_id: RoomId = None
    _one = model_validator(mode="before")(_one_conversation)


class WorkflowQuery(RagBody):
    """``ai/rag``'s body and Datafari 7.0's ``filters``, which narrow the workflow's."""

    filters: Filters = Field(default=None, validate_default=True)


class SummarizeBody(Shape):
    model_config = ConfigDict(extra="ignore", json_schema_extra={"required": ["id"]})

    id: DocId = None
    lang: Lang = None


ACTIONS = ("rag", "summarize", "search", "agentic")


def _action(value: Any, info: ValidationInfo) -> str:
    if value is None or value == "":
        return "rag"
    if value not in ACTIONS:
        raise DatafariError(_reading(info).label, f"'action' must be one of {', '.join(ACTIONS)}.")
    return str(value)


def _memory(value: Any, info: ValidationInfo) -> str | None:
    if value is not None and (not isinstance(value, str) or not value.strip() or len(value) > 200):
        raise DatafariError(_reading(info).label, "'memoryId' must be a string of at most 200 characters.")
    return value


def _agent(value: Any, info: ValidationInfo) -> str | None:
    if value is not None and not isinstance(value, str):
        raise DatafariError(_reading(info).label, "'agent' must be a string.")
    return value


class AiBody(ChatCoreShape):
    """Datafari 7.0's AiRequest (and the 6.x fields ``ai/stream`` shares), each field checked by
    its parser; :attr:`text` is the query the action needs (``summarize`` needs an ``id``)."""

    model_config = ConfigDict(extra="forbid", strict=False)

    query: Annotated[Any, WithJsonSchema(QUESTION)] = None  # with q: checked with the action
    q: Annotated[Any, WithJsonSchema(QUESTION)] = None
    action: Annotated[Any, BeforeValidator(_action), WithJsonSchema({"enum": list(ACTIONS)})] = Field(
        default=None, validate_default=True
    )
    id: DocId = None
    lang: Lang = None
    format: Format = None
    history: Annotated[Any, BeforeValidator(_history), WithJsonSchema(_history_schema("message"))] = Field(
        default=None, validate_default=True
    )
    prompt: Prompt = None
    filters: Filters = Field(default=None, validate_default=True)
    agent: Annotated[Any, BeforeValidator(_agent), WithJsonSchema({"type": "string"})] = None
    conversationId: ConversationRef = None
    room_id: RoomId = None
    search_type: SearchType = Field(default=None, validate_default=True)
    memoryId: Annotated[Any, BeforeValidator(_memory), WithJsonSchema({"type": "string", "maxLength": 200})] = None
    _text: str = PrivateAttr(default="")

    @model_validator(mode="before")
    @classmethod
    def _known_fields_first(cls, body: Any, info: ValidationInfo) -> Any:
        """Unknown fields are said before anything else is checked, as 7.0 answers them."""
        unknown = sorted(set(body) - set(cls.model_fields)) if isinstance(body, dict) else []
        if unknown:
            raise DatafariError(_reading(info).label, f"Unknown field(s): {', '.join(unknown)}.")
        return body

    @model_validator(mode="after")
    def _what_the_action_needs(self, info: ValidationInfo) -> AiBody:
        reading = _reading(info)
        if self.query is not None and self.q is not None:
            raise DatafariError(reading.label, "Give 'query' or 'q', not both.")
        if self.action == "summarize":
            if self.id is None:
                raise DatafariError(reading.label, "'id' is required for summarize.")
            return self
        text = self.query if self.query is not None else self.q
        try:
            self._text = parse_query(text, reading.max_query)
        except DatafariError as exc:
            reason = f"'query' (or 'q') is required for {self.action}: {exc.reason}"
            raise DatafariError(reading.label, reason) from None
        return self

    @property
    def text(self) -> str:
        return self._text


def rag_request(
    body: dict[str, Any], settings: Settings, default_lang: str | None, shape: type[RagBody] | None = None
) -> tuple[RagRequest, bool]:
    """The body of ``POST ai/rag`` (or a workflow's query: ``shape`` WorkflowQuery, ``settings`` its
    pipeline's) as the pipeline's request, with chat-core's fields; and whether the answer is kept
    (not ``is_test``)."""
    reading = Reading("ragBadRequest", settings.query_max_length, settings)
    rag = (shape or RagBody).model_validate(body, context=reading)
    chat = rag.chat_core()
    request = RagRequest(
        query=rag.query,
        doc_id=rag.id,
        lang=rag.lang or default_lang,
        history=rag.history,
        format=rag.format,
        question=rag.prompt,
        mode=rag.search_type,
        filters=getattr(rag, "filters", None) or NO_FILTER,  # a workflow's query: 7.0's filters
    )
    return chat.applied(request), not chat.is_test


# every body shape, by the name the OpenAPI document gives it
SHAPES: tuple[type[BaseModel], ...] = (
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
    WorkflowSpec,  # the workflow's one model (workflows/spec.py): the store's document too
)


def read(model: type[S], label: str) -> S:
    """The request's JSON body as ``model``, or :class:`DatafariError` with ``label``."""
    body = json_object(label)
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise DatafariError(label, refusal(exc)) from None
