"""The tables: Datafari 7.0's ``conversation`` (one user's thread) and chat-core's ``block`` (one
question and its answer, with how it was answered). Alembic's migrations create them; this module
is the model they are checked against."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

STATUSES = ("done", "error", "idle")  # idle: the client left before the answer ended


class Base(DeclarativeBase):
    pass


class Conversation(Base):
    __tablename__ = "conversation"
    __table_args__ = (UniqueConstraint("username", "client_ref", name="uq_conversation_client_ref"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    username: Mapped[str] = mapped_column(String(255), index=True)
    title: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_refresh: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # chat-core's per-room system prompt: instructions every answer in it follows (the owner's)
    instructions: Mapped[str] = mapped_column(Text, default="", server_default="")
    # chat-core's per-room prompts: {prompt name: jinja2 text}, as JSON (prompts/overrides.py)
    prompts: Mapped[str] = mapped_column(Text, default="{}", server_default="{}")
    # chat-core's room_id when the client chose it: the user's own name for the conversation
    client_ref: Mapped[str | None] = mapped_column(String(200), nullable=True)
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


class SignInFailure(Base):
    """One refused sign-in, kept for the throttle's window under two keys: the username tried
    (``user:<name>``) and the address it came from (``addr:<ip>``)."""

    __tablename__ = "sign_in_failure"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(300), index=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class OAuthClient(Base):
    """An MCP client registered with the sidecar's OAuth authorization server (RFC 7591): its
    registration as the client sent it, with the secret minted for it sealed."""

    __tablename__ = "oauth_client"

    client_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    registration: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class OAuthGrant(Base):
    """An authorization code (single use, minutes) or a refresh token (rotated at each use) of the
    authorization server, kept by its digest only: what it grants, to which client, for whom."""

    __tablename__ = "oauth_grant"

    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    client_id: Mapped[str] = mapped_column(String(64), index=True)
    username: Mapped[str] = mapped_column(String(255))
    details: Mapped[str] = mapped_column(Text)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class SettingOverride(Base):
    """A rag.properties key an administrator changed at run time (the admin page): it wins over the
    file and the environment until it is reset."""

    __tablename__ = "setting_override"

    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_by: Mapped[str] = mapped_column(String(255))


class StoreProbe(Base):
    """The one row readiness rewrites each check, about a turn's size: a store that can answer but
    not write (a full disk) is not ready."""

    __tablename__ = "store_probe"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    checked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    payload: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)


class Workflow(Base):
    """A named RAG pipeline: the workflow's whole document (``workflows/spec.py``'s model, secrets
    sealed), beside what the store searches by (its name, whether it is the default); its API keys
    in their own table."""

    __tablename__ = "workflow"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    is_default: Mapped[bool] = mapped_column(Boolean)
    document: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


def _workflow_fk() -> Mapped[str]:
    return mapped_column(String(36), ForeignKey("workflow.id", ondelete="CASCADE"), index=True)


class ApiKey(Base):
    """A workflow's API key: only its SHA-256 is kept (the key is shown once, at creation); it acts
    as ``username``, whose tokens decide what it may read."""

    __tablename__ = "api_key"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    workflow_id: Mapped[str] = _workflow_fk()
    name: Mapped[str] = mapped_column(String(100))
    prefix: Mapped[str] = mapped_column(String(16))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    username: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


JOB_STATUSES = ("running", "done", "failed")


class IndexJob(Base):
    """An indexing job (``POST …/index/jobs``): its progress, as every worker reads it."""

    __tablename__ = "index_job"
    __table_args__ = (CheckConstraint(f"status IN {JOB_STATUSES}", name="ck_index_job_status"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    username: Mapped[str] = mapped_column(String(255), index=True)
    workflow_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("workflow.id", ondelete="SET NULL"), nullable=True
    )
    status: Mapped[str] = mapped_column(String(8))
    total: Mapped[int] = mapped_column(Integer)
    done: Mapped[int] = mapped_column(Integer)
    chunks: Mapped[int | None] = mapped_column(Integer, nullable=True)  # None: counted by Solr's processor
    failed: Mapped[int] = mapped_column(Integer)
    errors: Mapped[list[str]] = mapped_column(JSON, default=list)  # the first ones, "id: why"
    callback_url: Mapped[str | None] = mapped_column(String(2048), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # who runs it ("host:pid:start", indexing/job_keeper.py) and when it last said it still does
    worker: Mapped[str | None] = mapped_column(String(255), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    folder: Mapped[str | None] = mapped_column(String(1024), nullable=True)  # its input, kept until it ends
    ids: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)  # its documents, as Solr knows them


class UserPreference(Base):
    """What a user chose in DatafariUI, kept across sessions: the interface language and the
    page's layout (``uiConfig``), keyed by the username any identity gives."""

    __tablename__ = "user_preference"

    username: Mapped[str] = mapped_column(String(255), primary_key=True)
    lang: Mapped[str | None] = mapped_column(String(16), nullable=True)
    ui_config: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SavedSearch(Base):
    """A search a user saved in DatafariUI: its name and the search page's query string."""

    __tablename__ = "saved_search"
    __table_args__ = (UniqueConstraint("username", "name", name="uq_saved_search_name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    username: Mapped[str] = mapped_column(String(255), index=True)
    name: Mapped[str] = mapped_column(String(200))
    search: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Alert(Base):
    """A search run on a schedule for its user (Datafari's alert): what is searched (``keyword``
    and ``filters``), how often, and when it runs next."""

    __tablename__ = "alert"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    username: Mapped[str] = mapped_column(String(255), index=True)
    subject: Mapped[str] = mapped_column(String(200))
    keyword: Mapped[str] = mapped_column(Text)
    filters: Mapped[str] = mapped_column(Text)
    core: Mapped[str] = mapped_column(String(100))
    mail: Mapped[str] = mapped_column(String(320))
    frequency: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_run_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    next_run_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class AlertRun(Base):
    """One run of an alert: the documents new since its previous run that its user may read."""

    __tablename__ = "alert_run"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    alert_id: Mapped[str] = mapped_column(String(36), ForeignKey("alert.id", ondelete="CASCADE"), index=True)
    ran_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    found: Mapped[int] = mapped_column(Integer)
    documents: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)  # id, title, url
    mailed: Mapped[bool] = mapped_column(Boolean, default=False)


class BasketDocument(Base):
    """A document a user put in a conversation's basket (Datafari 7.0's assistant)."""

    __tablename__ = "docs_basket"
    __table_args__ = (UniqueConstraint("conversation_id", "document_id", name="uq_docs_basket_document"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("conversation.id", ondelete="CASCADE"), index=True
    )
    document_id: Mapped[str] = mapped_column(String(2048))
    document_title: Mapped[str] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class AnswerFeedback(Base):
    """A user's rating of one answer (a conversation's turn): up or down, with an optional comment;
    one per turn, rated again in place."""

    __tablename__ = "answer_feedback"
    __table_args__ = (CheckConstraint("rating IN (-1, 1)", name="ck_answer_feedback_rating"),)

    block_id: Mapped[str] = mapped_column(String(36), ForeignKey("block.id", ondelete="CASCADE"), primary_key=True)
    username: Mapped[str] = mapped_column(String(255), index=True)
    rating: Mapped[int] = mapped_column(Integer)
    comment: Mapped[str] = mapped_column(Text, default="")
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
