"""Token statistics: each answer's usage added to its row (user, conversation, day, model) as its
final event goes by. Statistics are a record, not part of the answer: a store that fails is
logged and the answer goes on."""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Iterator

from ..rag.pipeline import Event
from ..store import StoreUnavailable
from .store import ConversationStore

log = logging.getLogger(__name__)


def counted(
    events: Iterator[Event],
    store: Callable[[], ConversationStore],
    username: str | None,
    conversation_id: str | None,
    model: str,
) -> Generator[Event, None, None]:
    for event in events:
        if event.type == "message.final" and username is not None:
            try:
                store().add_usage(username, conversation_id, model, event.data["usage"])
            except StoreUnavailable as exc:
                log.warning("token statistics of %s not recorded: %s", username, exc)
        yield event
