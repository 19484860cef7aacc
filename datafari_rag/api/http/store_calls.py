"""Calls to the relational store from a view: the store's refusals and failures as Datafari's
errors, each with its label, so that no view writes the same ``try`` again."""

from __future__ import annotations

from typing import Any

from ...alerts.store import SearchError
from ...conversations import ConversationLimit, ConversationNotFound
from ...errors import DatafariError
from ...store import StoreUnavailable
from ...store.users import UserError
from ...workflows.spec import WorkflowError


def store_call(call: Any, *args: Any, unavailable: DatafariError | None = None) -> Any:
    """A store call, its failures as Datafari's errors (``unavailable``: what a store that cannot
    be reached answers, by default ``conversationStoreUnavailable``)."""
    try:
        return call(*args)
    except ConversationNotFound:
        raise DatafariError("conversationNotFound") from None
    except ConversationLimit as exc:
        raise DatafariError("conversationLimit", str(exc)) from None
    except (UserError, WorkflowError, SearchError) as exc:  # refused requests, each with its label
        raise DatafariError(exc.label, str(exc)) from None
    except StoreUnavailable as exc:
        failure = unavailable or DatafariError("conversationStoreUnavailable")
        failure.detail = str(exc)
        raise failure from exc
