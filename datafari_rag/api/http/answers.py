"""What the endpoints answer, declared once as typed dictionaries: the views build these
dictionaries, and the OpenAPI document takes its response schemas from these classes (a key
that is not ``Required`` may be absent). ``tests/integration/test_openapi.py`` checks real answers
against them."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, Required

from pydantic import Field, WithJsonSchema
from typing_extensions import TypedDict  # pydantic reads typing's TypedDict from Python 3.12 on

from ...errors import LABELS

Count = Annotated[int, Field(ge=0)]
Objects = list[dict[str, Any]]


class Document(TypedDict):
    id: str
    title: str
    url: str
    content: str


class Reference(TypedDict):
    """a source the answer cites, by its number in the prompt"""

    number: Annotated[int, Field(ge=1)]
    id: str
    title: str
    url: str


class Citation(TypedDict):
    """a cited source with the sentence of it closest to the answer and its retrieval score"""

    number: Annotated[int, Field(ge=1)]
    id: str
    title: str
    url: str
    excerpt: str
    score: float


class Usage(TypedDict, total=False):
    """tokens of every LLM call of the answer (rewriting, map/refine, final)"""

    prompt_tokens: Count
    completion_tokens: Count
    total_tokens: Count
    estimated: bool


class Quality(TypedDict, total=False):
    """what every answer from sources adds (docs/strategies.md)"""

    citations: list[Citation]
    confidence: Annotated[float, Field(ge=0, le=1)]
    confidence_basis: Literal[
        "lexical-support",
        "faithfulness-check",
        "lexical-support+relevance",
        "faithfulness-check+relevance",
        "no-support",
    ]
    reasoning_steps: list[str]


class AnswerContent(Quality, total=False):
    message: Required[str]
    documents: Required[list[Document]]
    references: list[Reference]
    usage: Usage
    latency_ms: Count


class Ok(TypedDict):
    status: Literal["OK"]
    content: AnswerContent


class ErrorDetail(TypedDict, total=False):
    code: Required[Annotated[int, Field(ge=400, le=599)]]
    label: Required[Annotated[str, WithJsonSchema({"type": "string", "enum": sorted(LABELS)})]]
    reason: str


class ErrorContent(TypedDict):
    message: str
    documents: Annotated[list[Any], Field(max_length=0)]
    error: ErrorDetail


class Error(TypedDict):
    """Datafari's error JSON; the labels are those of datafari_rag/errors.py."""

    status: Literal["ERROR"]
    content: ErrorContent


class AiError(TypedDict, total=False):
    code: Required[str]
    label: Required[str]
    message: Required[str]
    reason: str | None


class AiContent(Quality, total=False):
    message: str | None
    sources: Required[list[Document]]
    docs: list[Document]
    conversationId: str
    error: AiError


class AiResponse(TypedDict):
    """Datafari 7.0's ApiResponse"""

    status: Literal["OK", "ERROR"]
    content: AiContent


class V1Ok(TypedDict):
    status: Literal["OK"]
    content: dict[str, Any]


class V1ErrorContent(TypedDict):
    code: int
    reason: str


class V1Error(TypedDict):
    status: Literal["ERROR"]
    content: V1ErrorContent


class Spellcheck(TypedDict, total=False):
    collations: Required[list[Any]]
    suggestions: list[Any]


class Suggestions(TypedDict):
    spellcheck: Spellcheck


class SolrDocs(TypedDict, total=False):
    numFound: Required[int]
    start: int
    docs: Required[Objects]


class SolrResults(TypedDict, total=False):
    """Solr's JSON response, without echoed parameters; "did you mean" when nothing was found"""

    responseHeader: dict[str, Any]
    response: Required[SolrDocs]
    spellcheck: Spellcheck


class UpdateHeader(TypedDict, total=False):
    status: int


class DocumentResult(TypedDict, total=False):
    id: str | None
    status: Required[Literal["ok", "error"]]
    chunks: int
    error: str
    code: Literal[400, 503]


class UpdateResult(TypedDict, total=False):
    responseHeader: UpdateHeader
    added: Required[int]
    failed: Required[int]
    deleted: Required[int]
    results: Required[list[DocumentResult]]


class UserContent(TypedDict, total=False):
    """a token (sign-in), a user, the users, or what was deleted; never a password"""

    token: str
    token_type: Literal["Bearer"]
    expires_in: int
    user: dict[str, Any]
    users: Objects
    deleted: str


class UserAnswer(TypedDict):
    status: Literal["OK"]
    content: UserContent


class WorkflowContent(TypedDict, total=False):
    """a workflow, the workflows, a key (its secret at creation only), the keys, or what was deleted"""

    workflow: dict[str, Any]
    workflows: Objects
    key: dict[str, Any]
    secret: str
    keys: Objects
    deleted: str


class WorkflowAnswer(TypedDict):
    status: Literal["OK"]
    content: WorkflowContent


class IndexJob(TypedDict, total=False):
    id: str
    status: Literal["running", "done", "failed"]
    percent: float
    documents: int
    total: int
    chunks: int | None
    failed: int
    errors: list[str]


class IndexJobContent(TypedDict, total=False):
    job: IndexJob
    links: dict[str, Any]


class IndexJobAnswer(TypedDict):
    status: Literal["OK"]
    content: IndexJobContent


class SettingsContent(TypedDict, total=False):
    """every key: section, help, default, value (a secret: only whether it is set), overridden, live"""

    settings: Objects


class SettingsAnswer(TypedDict):
    status: Literal["OK"]
    content: SettingsContent


class UsageContent(TypedDict):
    usage: Objects
    totals: dict[str, Any]


class UsageAnswer(TypedDict):
    status: Literal["OK"]
    content: UsageContent


class Conversation(TypedDict):
    id: str
    title: str
    instructions: str  # its own system prompt (chat-core's per-room one); "" without
    prompts: dict[str, str]  # its own prompt templates (chat-core's per-room prompts); {} without
    room_id: str | None  # the name its client gave it (chat-core's room_id), if any
    created_at: str
    last_refresh: str


class Source(TypedDict, total=False):
    id: str
    title: str
    url: str


class BlockRating(TypedDict):
    rating: Literal["up", "down"]
    comment: str


class Block(TypedDict, total=False):
    """a turn: the question, the answer and the sources the reader may still read"""

    id: Required[str]
    position: Required[int]
    question: Required[str]
    answer: Required[str]
    status: Required[Literal["done", "error", "idle"]]
    search_type: str
    rewritten_queries: list[str]
    sources: Required[list[Source]]
    usage: dict[str, Any]
    error_label: str | None
    latency_ms: int | None
    created_at: str
    feedback: BlockRating | None  # my rating of this answer
    answer_html: str  # the answer as the web UI shows it (Markdown rendered, cleaned)


class ConversationWithBlocks(Conversation, total=False):
    blocks: list[Block]


class ConversationContent(TypedDict, total=False):
    conversations: list[Conversation]
    conversation: ConversationWithBlocks
    deleted: str


class ConversationAnswer(TypedDict):
    status: Literal["OK"]
    content: ConversationContent


class Health(TypedDict, total=False):
    status: Required[Literal["UP", "DOWN"]]
    solr: dict[str, Any]
    agent: dict[str, Any]
    store: dict[str, Any]
    llm: dict[str, Any]  # an external OpenAI-compatible LLM: UP, DOWN or UNCHECKED; not part of readiness
    checkedSecondsAgo: float
    failedChecksInARow: int


class Live(TypedDict):
    status: str


class ResourceMetadata(TypedDict, total=False):
    resource: Required[str]
    authorization_servers: list[str]


class SessionState(TypedDict, total=False):
    """Datafari's RefreshSession answer: code 0 "Logged" (with the user) or -2 "Not logged"."""

    code: Required[Literal[0, -2]]
    status: Required[Literal["Logged", "Not logged"]]
    user: str
    isAdmin: bool
    keycloakUser: bool
    keycloakEnabled: bool
    samlEnabled: bool
    casEnabled: bool
    kerberosEnabled: bool
    oidcEnabled: bool


class FeedbackItem(TypedDict):
    conversation_id: str
    block_id: str
    username: str
    rating: Literal["up", "down"]
    comment: str
    question: str
    answer: str
    updated_at: str
    withheld: NotRequired[bool]
    withheld_reason: NotRequired[str]


class FeedbackContent(TypedDict):
    feedback: list[FeedbackItem]
    totals: dict[str, int]


class FeedbackAnswer(TypedDict):
    status: Literal["OK"]
    content: FeedbackContent


class RatedContent(TypedDict):
    feedback: FeedbackItem


class RatedAnswer(TypedDict):
    status: Literal["OK"]
    content: RatedContent


class PassageSpan(TypedDict):
    start: int
    end: int


class PreviewedDocument(TypedDict):
    id: str
    title: str
    url: str
    text: str
    passage: PassageSpan | None  # where the cited passage is in the text; None: not found


class PreviewContent(TypedDict):
    document: PreviewedDocument


class DocumentPreview(TypedDict):
    status: Literal["OK"]
    content: PreviewContent
