"""Conversations kept on the server: each user's conversations and their turns, in the relational
store (``store/``)."""

from .store import (
    ConversationLimit,
    ConversationNotFound,
    ConversationStore,
    Turn,
)

__all__ = [
    "ConversationLimit",
    "ConversationNotFound",
    "ConversationStore",
    "Turn",
]
