"""Each user's conversations and their turns (blocks), behind one small interface.

Every read and write names the user: a conversation of another user is found exactly as one
that does not exist. A turn is written in one transaction (question, answer, sources, usage),
so a failure never leaves half of it. Any database failure is :class:`StoreUnavailable`.
"""

from __future__ import annotations

import builtins
import json
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from ..store.schema import STATUSES, Block, Conversation, UsageStat
from ..store.transaction import StoreUnavailable, transaction

log = logging.getLogger(__name__)

TITLE_MAX = 200
# SQLite has no row locks: two turns of one conversation written at once may pick the same place,
# the later one is refused by the unique (conversation, position) and tries the next place.
_APPEND_TRIES = 10


class ConversationNotFound(LookupError):
    """No conversation with this id belongs to this user (it may not exist at all)."""


class ConversationLimit(ValueError):
    """The user has as many conversations, or the conversation as many turns, as allowed."""


@dataclass(frozen=True)
class Turn:
    """One question and how it was answered."""

    question: str
    answer: str
    status: str  # done | error | idle
    search_type: str = "rag"
    rewritten_queries: list[str] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    error_label: str | None = None
    latency_ms: int | None = None


@dataclass(frozen=True)
class PastTurn:
    """An answered turn as history: what was asked, answered, and from which documents (the
    reader must still be allowed to read all of them for it to be sent again)."""

    question: str
    answer: str
    source_ids: tuple[str, ...]


@dataclass(frozen=True)
class RoomPrompts:
    """What a conversation's owner set for its answers (chat-core's per-room system prompt and prompts)."""

    instructions: str = ""
    templates: dict[str, str] = field(default_factory=dict)  # prompt name: jinja2 text


def as_messages(turns: list[PastTurn], size: int) -> list[dict[str, str]]:
    """The last ``size`` chat messages of these turns."""
    messages: list[dict[str, str]] = []
    for turn in turns:
        messages += [{"role": "user", "content": turn.question}, {"role": "assistant", "content": turn.answer}]
    return messages[-size:] if size > 0 else []


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    """ISO 8601 in UTC; SQLite gives back naive datetimes, written in UTC."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _is_id(value: str) -> bool:
    try:
        return str(uuid.UUID(value)) == value
    except (ValueError, AttributeError, TypeError):
        return False


def conversation_json(row: Conversation) -> dict[str, Any]:
    created, refreshed = _iso(row.created_at), _iso(row.last_refresh)
    return {
        "id": row.id,
        "title": row.title,
        "instructions": row.instructions or "",
        "prompts": json.loads(row.prompts or "{}"),
        "room_id": row.client_ref,
        "created_at": created,
        "last_refresh": refreshed,
    }


def block_json(block: Block) -> dict[str, Any]:
    return {
        "id": block.id,
        "position": block.position,
        "question": block.question,
        "answer": block.answer,
        "status": block.status,
        "search_type": block.search_type,
        "rewritten_queries": list(block.rewritten_queries),
        "sources": list(block.sources),
        "usage": dict(block.usage),
        "error_label": block.error_label,
        "latency_ms": block.latency_ms,
        "created_at": _iso(block.created_at),
    }


class ConversationStore:
    def __init__(self, engine: Engine, max_per_user: int = 500, max_turns: int = 500) -> None:
        self.engine = engine
        self.sessions = sessionmaker(engine, expire_on_commit=False)
        self.max_per_user = max_per_user
        self.max_turns = max_turns

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with transaction(self.sessions, "the conversation store") as session:
            yield session

    @staticmethod
    def _owned(session: Session, username: str, conversation_id: str, lock: bool = False) -> Conversation:
        """The user's conversation; ``lock`` holds its row until the transaction ends (PostgreSQL),
        so that turns written at once take their places one after the other."""
        found = _is_id(conversation_id)
        row = session.get(Conversation, conversation_id, with_for_update=lock) if found else None
        if row is None or row.username != username:
            raise ConversationNotFound(conversation_id)
        return row

    def create(
        self,
        username: str,
        title: str | None = None,
        instructions: str = "",
        client_ref: str | None = None,
        prompts: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        now = _now()
        with self._session() as session:
            mine = select(func.count()).select_from(Conversation).where(Conversation.username == username)
            count = session.scalar(mine)
            if (count or 0) >= self.max_per_user:
                raise ConversationLimit(f"at most {self.max_per_user} conversations per user")
            row = Conversation(
                id=str(uuid.uuid4()),
                username=username,
                title=(title or f"Conversation of {now:%Y-%m-%d %H:%M}")[:TITLE_MAX],
                instructions=instructions,
                prompts=json.dumps(prompts or {}, ensure_ascii=False),
                client_ref=client_ref,
                created_at=now,
                last_refresh=now,
            )
            session.add(row)
            return conversation_json(row)

    def resolve_room(self, username: str, ref: str) -> str:
        """The id of the conversation chat-core's ``room_id`` names for ``username``: one of their
        conversations by its id, else the one their client named ``ref`` — created at its first
        use. Another user's id or name is never theirs: it names a conversation of their own."""
        if _is_id(ref):
            with self._session() as session:
                row = session.get(Conversation, ref)
                if row is not None and row.username == username:
                    return row.id
        for _ in range(2):  # two first uses at once: the second finds what the first created
            with self._session() as session:
                found = session.scalar(
                    select(Conversation.id).where(Conversation.username == username, Conversation.client_ref == ref)
                )
            if found is not None:
                return found
            try:
                return str(self.create(username, ref[:TITLE_MAX], client_ref=ref)["id"])
            except StoreUnavailable as exc:
                if not isinstance(exc.__cause__, IntegrityError):
                    raise
        raise StoreUnavailable("the room is created by too many requests at once")

    def list(self, username: str) -> list[dict[str, Any]]:
        """The user's conversations, the most recently used first."""
        query = (
            select(Conversation)
            .where(Conversation.username == username)
            .order_by(Conversation.last_refresh.desc(), Conversation.id)
        )
        with self._session() as session:
            return [conversation_json(row) for row in session.scalars(query)]

    def latest(self, username: str) -> dict[str, Any] | None:
        """The user's most recently used conversation, if any."""
        found = self.list(username)
        return found[0] if found else None

    def answer_last(self, username: str, conversation_id: str, answer: str) -> str:
        """An assistant's message: the answer of the latest turn still waiting for one, or a turn
        of its own; returns the block's id."""
        with self._session() as session:
            row = self._owned(session, username, conversation_id, lock=True)
            waiting = [b for b in row.blocks if b.status == "idle" and not b.answer]
            if waiting:
                block = waiting[-1]
                block.answer, block.status = answer, "done"
                row.last_refresh = _now()
                return block.id
        return self.append(username, conversation_id, Turn(question="", answer=answer, status="done"))

    def get(self, username: str, conversation_id: str) -> dict[str, Any]:
        """The conversation and its turns, in order; reopening it marks it as the last used. A
        store that cannot write (a full disk) still shows it: only the mark is not kept."""
        try:
            with self._session() as session:
                self._owned(session, username, conversation_id).last_refresh = _now()
        except StoreUnavailable as exc:
            log.warning("conversation %s shown but not marked as the last used: %s", conversation_id, exc)
        with self._session() as session:
            row = self._owned(session, username, conversation_id)
            return {**conversation_json(row), "blocks": [block_json(b) for b in row.blocks]}

    def rename(
        self,
        username: str,
        conversation_id: str,
        title: str | None,
        instructions: str | None = None,
        prompts: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """A new title, new instructions, new prompt templates ({}: none), or some of them (None: unchanged)."""
        with self._session() as session:
            row = self._owned(session, username, conversation_id)
            if title is not None:
                row.title = title[:TITLE_MAX]
            if instructions is not None:
                row.instructions = instructions
            if prompts is not None:
                row.prompts = json.dumps(prompts, ensure_ascii=False)
            return conversation_json(row)

    def delete(self, username: str, conversation_id: str) -> None:
        with self._session() as session:
            session.delete(self._owned(session, username, conversation_id))

    def history(self, username: str, conversation_id: str, size: int) -> builtins.list[dict[str, str]]:
        """The last ``size`` messages of the conversation's answered turns (failed turns skipped)."""
        with self._session() as session:
            self._owned(session, username, conversation_id)
            return as_messages(self._past(session, conversation_id, size), size)

    @staticmethod
    def _past(session: Session, conversation_id: str, size: int) -> builtins.list[PastTurn]:
        """The answered turns the last ``size`` history messages come from, oldest first."""
        query = (
            select(Block.question, Block.answer, Block.sources)
            .where(Block.conversation_id == conversation_id, Block.status == "done")
            .order_by(Block.position.desc())
            .limit(max(size, 0) // 2 + 1)
        )
        return [
            PastTurn(question, answer, tuple(str(s["id"]) for s in sources if s.get("id")))
            for question, answer, sources in reversed(session.execute(query).all())
        ]

    def prepare_turn(
        self, username: str, conversation_id: str, size: int
    ) -> tuple[builtins.list[PastTurn], RoomPrompts]:
        """Before a new turn is answered: the conversation is the user's and has room for one more
        turn (else :class:`ConversationNotFound`, :class:`ConversationLimit`); the answered turns
        its last ``size`` history messages come from (:func:`as_messages`), and its own prompts."""
        with self._session() as session:
            row = self._owned(session, username, conversation_id)
            count = select(func.count()).select_from(Block).where(Block.conversation_id == conversation_id)
            turns = session.scalar(count)
            if (turns or 0) >= self.max_turns:
                raise ConversationLimit(f"at most {self.max_turns} questions per conversation")
            own = RoomPrompts(row.instructions or "", json.loads(row.prompts or "{}"))
            return self._past(session, conversation_id, size), own

    def append(self, username: str, conversation_id: str, turn: Turn) -> str:
        """Saves one turn at the end of the conversation; returns its block id."""
        if turn.status not in STATUSES:
            raise ValueError(f"unknown status {turn.status!r}")
        for _ in range(_APPEND_TRIES):
            try:
                return self._append(username, conversation_id, turn)
            except StoreUnavailable as exc:
                if not isinstance(exc.__cause__, IntegrityError):
                    raise
        raise StoreUnavailable("the conversation is written by too many requests at once")

    def _append(self, username: str, conversation_id: str, turn: Turn) -> str:
        now = _now()
        with self._session() as session:
            row = self._owned(session, username, conversation_id, lock=True)
            last = session.scalar(select(func.max(Block.position)).where(Block.conversation_id == conversation_id))
            position = 0 if last is None else last + 1
            if position >= self.max_turns:
                raise ConversationLimit(f"at most {self.max_turns} questions per conversation")
            block = Block(
                id=str(uuid.uuid4()),
                conversation_id=conversation_id,
                position=position,
                question=turn.question,
                answer=turn.answer,
                status=turn.status,
                search_type=turn.search_type,
                rewritten_queries=list(turn.rewritten_queries),
                sources=list(turn.sources),
                usage=dict(turn.usage),
                error_label=turn.error_label,
                latency_ms=turn.latency_ms,
                created_at=now,
            )
            session.add(block)
            row.last_refresh = now
            return block.id

    def add_usage(self, username: str, conversation_id: str | None, model: str, usage: dict[str, Any]) -> None:
        """Adds one answer's tokens to its statistics row (an upsert: one statement, no race)."""
        counts = {k: int(usage.get(k) or 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
        row = {
            "username": username,
            "conversation_id": conversation_id or "",
            "day": _now().strftime("%Y-%m-%d"),
            "model": model[:200],
            "answers": 1,
            **counts,
        }
        dialect = postgresql_insert if self.engine.dialect.name == "postgresql" else sqlite_insert
        statement = dialect(UsageStat).values(**row)
        added = {k: getattr(UsageStat, k) + getattr(statement.excluded, k) for k in ("answers", *counts)}
        statement = statement.on_conflict_do_update(
            index_elements=["username", "conversation_id", "day", "model"], set_=added
        )
        with self._session() as session:
            session.execute(statement)

    def usage(self, username: str | None = None, conversation_id: str | None = None) -> builtins.list[dict[str, Any]]:
        """Statistics rows, newest day first: one user's (``None``: everyone's, for admins), of one
        conversation if asked."""
        query = select(UsageStat).order_by(UsageStat.day.desc(), UsageStat.username, UsageStat.conversation_id)
        if username is not None:
            query = query.where(UsageStat.username == username)
        if conversation_id is not None:
            query = query.where(UsageStat.conversation_id == conversation_id)
        fields = ("username", "conversation_id", "day", "model", "answers", "prompt_tokens", "completion_tokens")
        with self._session() as session:
            return [
                {**{k: getattr(r, k) for k in fields}, "total_tokens": r.total_tokens} for r in session.scalars(query)
            ]
