"""Who may read documents that come without an ACL field of their own: the tokens an indexing
job or ``datafari-rag index`` adds, so that nothing written is readable by everyone unless its
writer said so (``public``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ACL_PREFIXES = ("allow_token_", "deny_token_")


def has_acl(doc: Any) -> bool:
    """Whether a document carries ACL fields of its own (they are kept as they are)."""
    return isinstance(doc, dict) and any(str(k).startswith(ACL_PREFIXES) for k in doc)


def readable_by(tokens: list[str] | None) -> Callable[[Any], Any]:
    """A document given ``allow_token_document`` = ``tokens`` when it has no ACL field (None:
    left public)."""

    def protect(doc: Any) -> Any:
        if tokens is None or not isinstance(doc, dict) or has_acl(doc):
            return doc
        return {**doc, "allow_token_document": tokens}

    return protect
