"""Datafari 7.0's assistant endpoints of the signed-in user, on the product's conversation store:
``users/conversations`` (the conversations, and one's messages and documents basket),
``users/docsbasket`` and ``users/messages``.

Answers are Datafari's (``{"status": "OK", "content": {…}}``; errors ``{"status": "ERROR",
"content": {"code", "reason"}}`` with that HTTP status). Where Datafari answers a
``conversationId`` that is not the user's with their latest conversation, this answers 404, as
for one that does not exist. A message's documents and the basket show only what the user may read
now; a document is put in a basket only if the user may read it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint, request

from ...conversations import ConversationStore
from ...conversations.basket import Basket
from ...conversations.store import Turn
from ...errors import DatafariError
from ..http.answers import V1Error, V1Ok
from ..http.context import get_services
from ..http.contract import Param, endpoint, json
from ..http.shapes import AssistantConversation, AssistantMessage, AssistantRename, BasketDocumentBody, read
from ..http.store_calls import store_call
from .conversations import readable_ids, still_readable
from .datafari_v1 import as_signed_in_user

bp = Blueprint("assistant", __name__)

CONVERSATIONS, BASKET, MESSAGES = "/users/conversations", "/users/docsbasket", "/users/messages"
LABEL = "conversationBadRequest"
ID = {"type": "string", "minLength": 1, "maxLength": 2048}


def _replies(*errors: int) -> dict[int, Any]:
    return {200: json(V1Ok, "Datafari's answer")} | {
        code: json(V1Error, "Datafari's error") for code in (401, 503, *errors)
    }


def _answer(work: Callable[[str], dict[str, Any]]) -> Any:
    return as_signed_in_user(work, "Authentication required")


def _store() -> ConversationStore:
    return store_call(get_services().store.conversations)


def _basket() -> Basket:
    return store_call(get_services().store.basket)


def _messages(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation's turns as Datafari's messages (a user's, then the assistant's with the
    documents it was answered from), as the user may see them now."""
    messages = []
    for block in still_readable(conversation)["blocks"]:
        base = {"conversation_id": conversation["id"], "created_at": block["created_at"]}
        if block["question"]:
            messages.append({"id": f"{block['id']}:user", "role": "user", "content": block["question"], **base})
        if block["answer"] or block.get("withheld"):
            assistant = {"id": f"{block['id']}:assistant", "role": "assistant", "content": block["answer"]}
            messages.append({**assistant, "docs": block["sources"], **base, **_withheld(block)})
    return messages


def _withheld(block: dict[str, Any]) -> dict[str, Any]:
    return {"withheld": True, "withheld_reason": block["withheld_reason"]} if block.get("withheld") else {}


def _readable_basket(user: str, conversation_id: str) -> list[dict[str, Any]]:
    entries = store_call(_basket().of, user, conversation_id)
    readable = readable_ids({e["document_id"] for e in entries})
    return [e for e in entries if e["document_id"] in readable]


def _overview(user: str, conversation_id: str | None) -> dict[str, Any]:
    """The conversations, and the named one's (else the latest's) title, messages and basket."""
    store = _store()
    conversations = store_call(store.list, user)
    if conversation_id is None and conversations:
        conversation_id = conversations[0]["id"]
    content: dict[str, Any] = {"conversationId": conversation_id, "conversations": conversations}
    if conversation_id is None:
        return content | {"docsBasket": [], "messages": [], "title": None}
    conversation = store_call(store.get, user, conversation_id)  # another user's: 404
    basket = _readable_basket(user, conversation_id)
    return content | {"docsBasket": basket, "messages": _messages(conversation), "title": conversation["title"]}


def _conversation_param() -> str | None:
    value = request.args.get("conversationId")
    if value is not None and not value.strip():
        raise DatafariError(LABEL, "'conversationId' is empty.")
    return value


@bp.get(CONVERSATIONS)
@endpoint(
    "My conversations, with the messages and documents basket of one (conversationId) or of the latest",
    _replies(400, 404),
    params=(Param("conversationId", ID, "the conversation to open (default: the latest)"),),
)
def overview() -> Any:
    return _answer(lambda user: _overview(user, _conversation_param()))


@bp.post(CONVERSATIONS)
@endpoint(
    "Start a conversation, its basket copied from another of mine (sourceConversationId)",
    _replies(400, 404, 409, 413, 415),
    AssistantConversation,
)
def start() -> Any:
    def create(user: str) -> dict[str, Any]:
        body = read(AssistantConversation, LABEL)
        if body.sourceConversationId is not None:  # another user's: 404, nothing created
            store_call(_basket().of, user, body.sourceConversationId)
        made = store_call(_store().create, user, "New conversation")
        if body.sourceConversationId is not None:
            store_call(_basket().copy, user, body.sourceConversationId, made["id"])
        return _overview(user, made["id"])

    return _answer(create)


@bp.put(CONVERSATIONS)
@endpoint("Rename one of my conversations", _replies(400, 404, 413, 415), AssistantRename)
def rename() -> Any:
    def change(user: str) -> dict[str, Any]:
        body = read(AssistantRename, LABEL)
        renamed = store_call(_store().rename, user, body.conversationId, " ".join(body.title.split()))
        return {"conversationId": renamed["id"], "title": renamed["title"]}

    return _answer(change)


@bp.delete(CONVERSATIONS)
@endpoint(
    "Delete one of my conversations (its messages and basket); answers what remains",
    _replies(400, 404),
    params=(Param("conversationId", ID, "the conversation to delete", True),),
)
def delete() -> Any:
    def remove(user: str) -> dict[str, Any]:
        conversation_id = _conversation_param()
        if conversation_id is None:
            raise DatafariError(LABEL, "'conversationId' is required.")
        store_call(_store().delete, user, conversation_id)
        return _overview(user, None)

    return _answer(remove)


@bp.get(BASKET)
@endpoint("The documents basket of my latest conversation (the documents I may still read)", _replies())
def basket() -> Any:
    def latest(user: str) -> dict[str, Any]:
        conversation = store_call(_store().latest, user)
        return {"docsbasket": _readable_basket(user, conversation["id"]) if conversation else []}

    return _answer(latest)


@bp.post(BASKET)
@endpoint(
    "Put a document I may read in a conversation's basket (the latest, or a new one)",
    _replies(400, 404, 409, 413, 415),
    BasketDocumentBody,
)
def add_to_basket() -> Any:
    def add(user: str) -> dict[str, Any]:
        body = read(BasketDocumentBody, LABEL)
        if body.docId not in readable_ids({body.docId}):  # missing or not readable: the same 404
            raise DatafariError("documentNotFound")
        conversation_id = body.conversationId or _latest_or_new(user, body.docTitle)
        return {"id": store_call(_basket().add, user, conversation_id, body.docId, body.docTitle)}

    return _answer(add)


@bp.delete(BASKET)
@endpoint(
    "Take a document out of one of my baskets; answers my latest conversation's basket",
    _replies(400, 404),
    params=(Param("id", ID, "the basket entry", True),),
)
def remove_from_basket() -> Any:
    def remove(user: str) -> dict[str, Any]:
        entry = request.args.get("id", "")
        if not entry.strip():
            raise DatafariError(LABEL, "'id' is required.")
        store_call(_basket().remove, user, entry)
        conversation = store_call(_store().latest, user)
        return {"docsbasket": _readable_basket(user, conversation["id"]) if conversation else []}

    return _answer(remove)


def _latest_or_new(user: str, title: str) -> str:
    latest = store_call(_store().latest, user)
    return str(latest["id"] if latest else store_call(_store().create, user, title[:50])["id"])


@bp.post(MESSAGES)
@endpoint(
    "Keep a message of the assistant's conversation (a new conversation when none is named)",
    _replies(400, 404, 409, 413, 415),
    AssistantMessage,
)
def add_message() -> Any:
    def keep(user: str) -> dict[str, Any]:
        body = read(AssistantMessage, LABEL)
        store = _store()
        conversation_id = body.conversationId or store_call(store.create, user, body.content[:50])["id"]
        if body.role == "user":
            store_call(store.append, user, conversation_id, Turn(question=body.content, answer="", status="idle"))
        else:
            store_call(store.answer_last, user, conversation_id, body.content)
        return {"conversationId": conversation_id}

    return _answer(keep)
