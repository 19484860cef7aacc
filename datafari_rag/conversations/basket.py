"""The documents basket of a conversation (Datafari 7.0's assistant): each entry belongs to a
conversation of its user, so every read and write goes through the conversation's owner."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import sessionmaker

from ..store.schema import BasketDocument
from ..store.transaction import transaction
from .store import ConversationLimit, ConversationNotFound, ConversationStore, _is_id, _iso

WHAT = "the documents basket"
MAX_DOCUMENTS = 200  # per conversation


def basket_json(row: BasketDocument) -> dict[str, Any]:
    """An entry as Datafari's ``docsbasket`` rows are."""
    return {
        "id": row.id,
        "conversation_id": row.conversation_id,
        "document_id": row.document_id,
        "document_title": row.document_title,
        "created_at": _iso(row.created_at),
    }


class Basket:
    def __init__(self, engine: Engine) -> None:
        self.sessions = sessionmaker(engine, expire_on_commit=False)

    _owned = staticmethod(ConversationStore._owned)  # the conversation's owner, as every turn checks it

    def of(self, username: str, conversation_id: str) -> list[dict[str, Any]]:
        """The conversation's basket, the latest added first."""
        with transaction(self.sessions, WHAT) as session:
            self._owned(session, username, conversation_id)
            rows = session.scalars(
                select(BasketDocument)
                .where(BasketDocument.conversation_id == conversation_id)
                .order_by(BasketDocument.created_at.desc(), BasketDocument.id)
            )
            return [basket_json(r) for r in rows]

    def add(self, username: str, conversation_id: str, document_id: str, title: str) -> str:
        """Adds a document (once: adding it again gives the same entry); returns the entry's id."""
        with transaction(self.sessions, WHAT) as session:
            self._owned(session, username, conversation_id)
            mine = list(
                session.scalars(select(BasketDocument).where(BasketDocument.conversation_id == conversation_id))
            )
            for row in mine:
                if row.document_id == document_id:
                    return row.id
            if len(mine) >= MAX_DOCUMENTS:
                raise ConversationLimit(f"at most {MAX_DOCUMENTS} documents in a conversation's basket")
            entry = BasketDocument(
                id=str(uuid.uuid4()),
                conversation_id=conversation_id,
                document_id=document_id,
                document_title=title[:500],
                created_at=datetime.now(UTC),
            )
            session.add(entry)
            return entry.id

    def remove(self, username: str, entry_id: str) -> None:
        with transaction(self.sessions, WHAT) as session:
            row = session.get(BasketDocument, entry_id) if _is_id(entry_id) else None
            if row is None:
                raise ConversationNotFound(entry_id)
            self._owned(session, username, row.conversation_id)  # another user's entry: not found
            session.delete(row)

    def copy(self, username: str, source_id: str, target_id: str) -> None:
        """Puts the documents of one of the user's baskets in another of theirs."""
        for entry in reversed(self.of(username, source_id)):
            self.add(username, target_id, entry["document_id"], entry["document_title"])
