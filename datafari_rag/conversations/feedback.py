"""Users' ratings of answers: thumbs up or down on a turn, with an optional comment. A turn is
rated by its conversation's owner only (another user's turn is not found); administrators read
everyone's ratings. The answers rated good, with their question and cited sources, are an
evaluation set (``datafari-rag feedback export``, read by ``datafari-rag eval answers``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import sessionmaker

from ..store.schema import AnswerFeedback, Block, Conversation
from ..store.transaction import transaction
from .store import ConversationNotFound, ConversationStore, _is_id, _iso

WHAT = "the answers' ratings"
RATINGS = {"up": 1, "down": -1}
MAX_COMMENT = 2000


def feedback_json(row: AnswerFeedback, block: Block) -> dict[str, Any]:
    return {
        "conversation_id": block.conversation_id,
        "block_id": row.block_id,
        "username": row.username,
        "rating": "up" if row.rating > 0 else "down",
        "comment": row.comment,
        "question": block.question,
        "answer": block.answer,
        "updated_at": _iso(row.updated_at),
        "source_ids": [str(src["id"]) for src in block.sources if src.get("id")],
    }


class FeedbackStore:
    def __init__(self, engine: Engine) -> None:
        self.sessions = sessionmaker(engine, expire_on_commit=False)

    _owned = staticmethod(ConversationStore._owned)  # the conversation's owner, as every turn checks it

    def rate(
        self, username: str, conversation_id: str, block_id: str, rating: str, comment: str = ""
    ) -> dict[str, Any]:
        """Rates a turn of one of the user's conversations (again: the new rating replaces the old)."""
        if rating not in RATINGS:
            raise ValueError("rating is 'up' or 'down'")
        if len(comment) > MAX_COMMENT:
            raise ValueError(f"a comment has at most {MAX_COMMENT} characters")
        with transaction(self.sessions, WHAT) as session:
            self._owned(session, username, conversation_id)
            block = session.get(Block, block_id) if _is_id(block_id) else None
            if block is None or block.conversation_id != conversation_id:
                raise ConversationNotFound(block_id)
            row = session.get(AnswerFeedback, block_id)
            if row is None:
                row = AnswerFeedback(block_id=block_id, username=username)
                session.add(row)
            row.rating, row.comment, row.updated_at = RATINGS[rating], comment, datetime.now(UTC)
            return feedback_json(row, block)

    def of_conversation(self, username: str, conversation_id: str) -> dict[str, dict[str, Any]]:
        """The ratings of a conversation's turns, by turn id."""
        with transaction(self.sessions, WHAT) as session:
            self._owned(session, username, conversation_id)
            rows = session.execute(
                select(AnswerFeedback, Block)
                .join(Block, Block.id == AnswerFeedback.block_id)
                .where(Block.conversation_id == conversation_id)
            )
            return {f.block_id: feedback_json(f, b) for f, b in rows}

    def listed(self, username: str | None, rating: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        """The latest ratings: one user's, or (None) everyone's, for an administrator."""
        query = select(AnswerFeedback, Block).join(Block, Block.id == AnswerFeedback.block_id)
        if username is not None:
            query = query.where(AnswerFeedback.username == username)
        if rating is not None:
            query = query.where(AnswerFeedback.rating == RATINGS[rating])
        query = query.order_by(AnswerFeedback.updated_at.desc(), AnswerFeedback.block_id).limit(limit)
        with transaction(self.sessions, WHAT) as session:
            return [feedback_json(f, b) for f, b in session.execute(query)]

    def counts(self, username: str | None) -> dict[str, int]:
        """How many answers were rated up and down (one user's, or everyone's)."""
        query = select(AnswerFeedback.rating, func.count()).group_by(AnswerFeedback.rating)
        if username is not None:
            query = query.where(AnswerFeedback.username == username)
        with transaction(self.sessions, WHAT) as session:
            found: dict[int, int] = {rating: count for rating, count in session.execute(query)}
        return {"up": found.get(1, 0), "down": found.get(-1, 0)}

    def good_answers(self) -> list[dict[str, Any]]:
        """Every answer rated up, with its question, its owner and the sources it cited."""
        query = (
            select(AnswerFeedback, Block)
            .join(Block, Block.id == AnswerFeedback.block_id)
            .join(Conversation, Conversation.id == Block.conversation_id)
            .where(AnswerFeedback.rating > 0)
            .order_by(AnswerFeedback.updated_at, AnswerFeedback.block_id)
        )
        with transaction(self.sessions, WHAT) as session:
            return [
                {**feedback_json(f, b), "sources": [s for s in b.sources if s.get("cited")] or list(b.sources)}
                for f, b in session.execute(query)
            ]
