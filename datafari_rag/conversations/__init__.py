"""Conversations kept on the server: a relational store (SQLite by default, PostgreSQL in
production) of each user's conversations and their turns, with Alembic migrations."""

from .store import (
    ConversationLimit,
    ConversationNotFound,
    ConversationStore,
    StoreHandle,
    StoreUnavailable,
    Turn,
)

__all__ = [
    "ConversationLimit",
    "ConversationNotFound",
    "ConversationStore",
    "StoreHandle",
    "StoreUnavailable",
    "Turn",
]
