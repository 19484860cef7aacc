"""Conversations kept on the server: ``GET|POST conversations``, ``GET|PATCH|PUT|DELETE
conversations/<id>``, token statistics (``GET usage``), and the binding of a RAG request's
``conversationId`` (or ``room_id``) to its stored history and to the turn it adds.

A conversation belongs to the signed-in user who created it; anonymous requests get none. Another
user's conversation answers exactly like a missing one (404 ``conversationNotFound``). Reopening a
conversation shows each stored source only if the user may still read it.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import replace
from typing import Any

from flask import Blueprint, Response, request

from ...conversations import ConversationStore
from ...conversations.recorder import TurnRecorder
from ...conversations.store import PastTurn, as_messages
from ...conversations.usage import counted
from ...errors import DatafariError
from ...filters import SourceFilter
from ...rag.pipeline import Event, RagRequest, Wrap
from ...text.markdown import answer_html
from ..http.answers import ConversationAnswer, UsageAnswer
from ..http.auth import current_access, is_admin
from ..http.context import get_services
from ..http.contract import REFUSALS, Param, endpoint, json, names, refusals
from ..http.errors import ok_content
from ..http.shapes import ConversationChange, NewConversation, RoomRef, conversation_of, read
from ..http.store_calls import store_call

bp = Blueprint("conversations", __name__)


def _owner() -> str:
    username = current_access().username
    if username is None:
        raise DatafariError("authenticationFailed", "Conversations belong to a signed-in user.")
    return username


def whose(params: tuple[Param, ...], what: str) -> str | None:
    """Whose rows a listing reads (``usage``, ``feedback``): the signed-in user's; an
    administrator's, everyone's (None) or one user's (``user``); its parameters checked."""
    owner = _owner()
    unknown = sorted(set(request.args) - names(params))
    if unknown:
        raise DatafariError("conversationBadRequest", f"Unsupported parameter(s): {', '.join(unknown)}.")
    user, admin = request.args.get("user"), is_admin(owner)
    if user is not None and user != owner and not admin:
        raise DatafariError("accessForbidden", f"Only administrators read other users' {what}.")
    return user if user is not None else (None if admin else owner)


def _store() -> ConversationStore:
    return store_call(get_services().store.conversations)


def _ok(content: dict[str, Any], status: int = 200) -> tuple[Response, int]:
    return ok_content(content), status


def _tidy(title: str | None) -> str | None:
    return None if title is None else " ".join(title.split())


THE_CONVERSATION = json(ConversationAnswer, "the conversation")
USAGE = (
    Param("room", description="one conversation's statistics"),
    Param("user", description="administrators: that user's statistics"),
)


@bp.get("/conversations")
@endpoint(
    "My conversations, the most recently used first",
    {200: json(ConversationAnswer, "the list"), **refusals(401, 403, 503)},
)
def list_conversations() -> tuple[Response, int]:
    owner = _owner()
    return _ok({"conversations": store_call(_store().list, owner)})


@bp.post("/conversations")
@endpoint(
    "Start a conversation (its id goes in conversationId of ai/rag, ai/stream, ai)",
    {201: json(ConversationAnswer, "the new conversation"), **refusals(400, 401, 403, 409, 413, 415, 503)},
    NewConversation,
    body_required=False,
)
def create_conversation() -> tuple[Response, int]:
    owner = _owner()
    body = read(NewConversation, "conversationBadRequest")
    created = store_call(_store().create, owner, _tidy(body.title), body.instructions.strip(), None, body.prompts)
    return _ok({"conversation": created}, 201)


@bp.get("/conversations/<conversation_id>")
@endpoint(
    "One of my conversations, its turns and the sources I may still read",
    {200: THE_CONVERSATION, **refusals(400, 401, 403, 404, 413, 415, 503)},
)
def read_conversation(conversation_id: str) -> tuple[Response, int]:
    owner = _owner()
    conversation = store_call(_store().get, owner, conversation_id)
    ratings = store_call(store_call(get_services().store.feedback).of_conversation, owner, conversation_id)
    for block in conversation["blocks"]:
        rated = ratings.get(block["id"])
        block["feedback"] = {"rating": rated["rating"], "comment": rated["comment"]} if rated else None
    shown = still_readable(conversation)
    for block in shown["blocks"]:
        block["answer_html"] = answer_html(block["answer"])
    return _ok({"conversation": shown})


@bp.route("/conversations/<conversation_id>", methods=["PATCH", "PUT"])
@endpoint(
    "Rename one of my conversations, or change its instructions (its own system prompt) or prompts",
    {200: THE_CONVERSATION, **refusals(400, 401, 403, 404, 413, 415, 503)},
    ConversationChange,
)
def rename_conversation(conversation_id: str) -> tuple[Response, int]:
    owner = _owner()
    body = read(ConversationChange, "conversationBadRequest")
    if body.title is None and body.instructions is None and body.prompts is None:
        raise DatafariError("conversationBadRequest", "Give 'title', 'instructions', 'prompts' or several.")
    instructions = None if body.instructions is None else body.instructions.strip()
    changed = store_call(_store().rename, owner, conversation_id, _tidy(body.title), instructions, body.prompts)
    return _ok({"conversation": changed})


@bp.delete("/conversations/<conversation_id>")
@endpoint(
    "Delete one of my conversations and its turns",
    {200: THE_CONVERSATION, **refusals(400, 401, 403, 404, 413, 415, 503)},
)
def delete_conversation(conversation_id: str) -> tuple[Response, int]:
    owner = _owner()
    store_call(_store().delete, owner, conversation_id)
    return _ok({"deleted": conversation_id})


@bp.get("/usage")
@endpoint(
    "Token statistics per day, conversation and model: mine; an administrator's: anyone's",
    {200: json(UsageAnswer, "the rows and their totals"), **refusals(*REFUSALS)},
    params=USAGE,
)
def usage() -> tuple[Response, int]:
    """Token statistics: mine (``room``: of one conversation); an administrator
    (``security.admins``) reads everyone's, or one user's with ``user``."""
    who = whose(USAGE, "statistics")
    rows = store_call(_store().usage, who, request.args.get("room"))
    totals = {k: sum(r[k] for r in rows) for k in ("answers", "prompt_tokens", "completion_tokens", "total_tokens")}
    return _ok({"usage": rows, "totals": totals})


WITHHELD = "A document this answer came from is no longer readable by you: the answer is withheld."


def readable_ids(ids: set[str]) -> set[str]:
    """Which of these documents the current user may read now (secured searches, 500 ids each);
    fails closed: when permissions cannot be checked, the request fails."""
    readable: set[str] = set()
    wanted = sorted(ids)
    services = get_services()
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        params = [("q", "*:*"), ("fl", "id"), ("rows", len(batch)), *SourceFilter({"id": tuple(batch)}).main_params()]
        try:
            found = services.main.search("select", params, current_access())
        except Exception as exc:
            raise DatafariError("ragTechnicalError", "The sources' permissions could not be checked.") from exc
        readable |= {doc["id"] for doc in found["response"]["docs"]}
    return readable


def withheld(turn: dict[str, Any]) -> dict[str, Any]:
    """A turn (or a rating of it) answered from a document the reader may no longer read: its
    question stays, its answer does not, and it says why."""
    return {**turn, "answer": "", "withheld": True, "withheld_reason": WITHHELD}


def still_readable(conversation: dict[str, Any]) -> dict[str, Any]:
    """The conversation as the user may see it now: each stored source kept only if they may read
    it; a turn answered from a document they can no longer read (any of those in its prompt)
    shows its question, but neither its answer nor that source, and says why (``withheld``)."""
    ids = {s["id"] for block in conversation["blocks"] for s in block["sources"] if s.get("id")}
    readable = readable_ids(ids)
    blocks = []
    for block in conversation["blocks"]:
        sources = [s for s in block["sources"] if s.get("id") in readable]
        if len(sources) < len([s for s in block["sources"] if s.get("id")]):
            block = withheld(block)
        blocks.append({**block, "sources": sources})
    return {**conversation, "blocks": blocks}


def readable_history(turns: list[PastTurn], size: int) -> list[dict[str, str]]:
    """The history messages of the turns whose documents the user may all still read: a turn
    answered from a document they lost is not sent to the LLM again."""
    readable = readable_ids({i for turn in turns for i in turn.source_ids})
    return as_messages([t for t in turns if set(t.source_ids) <= readable], size)


def conversation_id(body: dict[str, Any], label: str) -> str | None:
    """``conversationId`` (Datafari 7.0: an existing conversation) or ``room_id`` (chat-core: a
    :class:`RoomRef`) of a request body, as its shape checks it."""
    return conversation_of(body, label)


def bind_answer(
    rag: RagRequest, cid: str | None, technical_label: str = "ragTechnicalError", keep: bool = True
) -> tuple[RagRequest, Wrap]:
    """What an answer needs from the store: with a conversation, the request with the stored
    history (unless the body sent its own) and the recording of the new turn; for every signed-in
    user, the token statistics. Not ``keep`` (chat-core's ``is_test``): the history is read, but
    nothing is recorded. Returns the request and the wrapper of the pipeline's events."""
    services = get_services()
    username = current_access().username
    model = services.settings.llm_model or "default"
    recorder = None
    if isinstance(cid, RoomRef):  # the client's own room name: the user's conversation of that name
        down = DatafariError(technical_label, "The conversation store cannot be reached.")
        store = store_call(services.store.conversations, unavailable=down)
        cid = store_call(store.resolve_room, _owner(), str(cid), unavailable=down)
    if cid is not None:
        rag, recorder = _bind_turn(rag, cid, technical_label)

    def wrap(events: Iterator[Event]) -> Generator[Event, None, None]:
        if not keep:
            return _as_is(events)
        recorded = recorder.wrap(events) if recorder else events
        return counted(recorded, services.store.conversations, username, cid, model)

    return rag, wrap


def _as_is(events: Iterator[Event]) -> Generator[Event, None, None]:
    yield from events


def _bind_turn(rag: RagRequest, cid: str, technical_label: str) -> tuple[RagRequest, TurnRecorder]:
    owner = _owner()
    services = get_services()
    # a store that cannot be reached refuses the answer rather than give one that is not kept
    down = DatafariError(technical_label, "The conversation store cannot be reached.")
    store = store_call(services.store.conversations, unavailable=down)
    size = services.settings.chat_history_size
    past, own = store_call(store.prepare_turn, owner, cid, size, unavailable=down)
    question = rag.question or rag.query
    recorder = TurnRecorder(store, owner, cid, question, search_type=rag.mode, technical_label=technical_label)
    if not rag.history:
        rag = replace(rag, history=readable_history(past, size))
    return replace(rag, instructions=own.instructions, prompts=own.templates), recorder
