"""The tables: Datafari 7.0's ``conversation`` (one user's thread) and chat-core's ``block`` (one
question and its answer, with how it was answered). Alembic's migrations create them; this module
is the model they are checked against."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, CheckConstraint, DateTime, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

STATUSES = ("done", "error", "idle")  # idle: the client left before the answer ended


class Base(DeclarativeBase):
    pass


class Conversation(Base):
    __tablename__ = "conversation"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    username: Mapped[str] = mapped_column(String(255), index=True)
    title: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_refresh: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    blocks: Mapped[list[Block]] = relationship(
        back_populates="conversation", order_by="Block.position", cascade="all, delete-orphan", passive_deletes=True
    )


class Block(Base):
    __tablename__ = "block"
    __table_args__ = (
        UniqueConstraint("conversation_id", "position", name="uq_block_position"),
        CheckConstraint(f"status IN {STATUSES}", name="ck_block_status"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("conversation.id", ondelete="CASCADE"), index=True
    )
    position: Mapped[int] = mapped_column(Integer)
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(8))
    search_type: Mapped[str] = mapped_column(String(16))
    rewritten_queries: Mapped[list[str]] = mapped_column(JSON, default=list)
    sources: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)  # what the answer was built from
    usage: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    error_label: Mapped[str | None] = mapped_column(String(64), nullable=True)
    latency_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    conversation: Mapped[Conversation] = relationship(back_populates="blocks")


class UsageStat(Base):
    """Tokens used, per user, conversation (empty: answers outside one), day (UTC) and model;
    each answer adds to its row."""

    __tablename__ = "usage_stat"
    __table_args__ = (UniqueConstraint("username", "conversation_id", "day", "model", name="uq_usage_stat"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    username: Mapped[str] = mapped_column(String(255), index=True)
    conversation_id: Mapped[str] = mapped_column(String(36))
    day: Mapped[str] = mapped_column(String(10))  # YYYY-MM-DD
    model: Mapped[str] = mapped_column(String(200))
    answers: Mapped[int] = mapped_column(Integer)
    prompt_tokens: Mapped[int] = mapped_column(Integer)
    completion_tokens: Mapped[int] = mapped_column(Integer)
    total_tokens: Mapped[int] = mapped_column(Integer)


class AppUser(Base):
    """A local account (when no identity provider is configured): its password hashed (argon2id)."""

    __tablename__ = "app_user"

    username: Mapped[str] = mapped_column(String(255), primary_key=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    admin: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
