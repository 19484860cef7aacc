"""chat-core's request fields, honoured by ``ai/rag``, ``ai/stream``, ``POST ai`` and a
workflow's query: its exact request is answered, never refused for fields this API names
otherwise.

- ``collection_name``: the collection the pipeline searches (its FileShare name or the prefix
  before ``_FileShare``, a workflow's ``collection``) or an alias of it (``chat.collectionAliases``);
  any other name is refused — it never selects a collection the caller was not given.
- ``metadata_filter_key`` / ``metadata_filter_values``: a filter on one whitelisted field
  (:data:`datafari_rag.filters.FIELDS`, never an ACL field); it only narrows.
- ``top_k``: how many documents (and passages) the answer is built from, 1 to ``MAX_TOP_K``.
- ``temperature``: the LLM's sampling temperature for this answer, 0 to 2 (OpenAI's bounds).
- ``use_paragraph``: false sends each retrieved text whole instead of its paragraphs (chunks).
- ``is_test``: the answer is given but kept nowhere (no conversation turn, no token statistics).
- ``user_id``: read, never trusted: whose documents count is the signed-in identity's.
- ``history_filter``: ``{"block_classes": [...], "metadata": {"key": [values]}}``, the history
  messages that reach the prompt (``rag/history.py``); it narrows ``chat.history.blockClasses``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...config import Settings
from ...errors import DatafariError
from ...filters import FIELDS, NO_FILTER, SourceFilter, source_filter
from ...rag.history import EVERY_MESSAGE, HistoryFilter
from ...rag.pipeline import RagRequest
from .validation import MAX_TAGS, TAG_NAME

MAX_TOP_K = 50
NAMES = (
    "collection_name",
    "metadata_filter_key",
    "metadata_filter_values",
    "top_k",
    "temperature",
    "use_paragraph",
    "is_test",
    "user_id",
    "history_filter",
)


@dataclass(frozen=True)
class ChatCoreFields:
    filters: SourceFilter = NO_FILTER
    top_k: int | None = None
    temperature: float | None = None
    whole_documents: bool = False
    is_test: bool = False
    history_filter: HistoryFilter = EVERY_MESSAGE

    def applied(self, rag: RagRequest) -> RagRequest:
        return replace(
            rag,
            history_filter=self.history_filter,
            filters=rag.filters.narrowed(self.filters),
            top_k=self.top_k,
            temperature=self.temperature,
            whole_documents=self.whole_documents,
        )


def collections(settings: Settings) -> set[str]:
    """The names ``collection_name`` may give: the pipeline's own collection, and its aliases."""
    main = settings.collection_main
    aliases = {a.strip() for a in settings.chat_collection_aliases.split(",") if a.strip()}
    return {main, main.removesuffix("_FileShare"), *aliases}


# One check per field, each raising DatafariError with the body's label; ``api/http/shapes.py``'s
# ChatCoreShape runs them as the fields' validators, so a body checks itself.


def collection_name(value: Any, label: str, settings: Settings) -> str | None:
    if value is not None and (not isinstance(value, str) or value not in collections(settings)):
        raise DatafariError(label, "'collection_name' names no collection this endpoint searches.")
    return value


def metadata_filter_key(value: Any, label: str) -> str | None:
    if value is not None and (not isinstance(value, str) or value not in FIELDS):
        raise DatafariError(label, f"'metadata_filter_key' is one of {', '.join(FIELDS)}.")
    return value


def metadata_filter(key: str | None, values: Any, label: str) -> SourceFilter:
    """The filter on ``key``'s ``values``, the two given together or not at all."""
    if (key is None) != (values is None):
        raise DatafariError(label, "Give 'metadata_filter_key' and 'metadata_filter_values' together.")
    if key is None:
        return NO_FILTER
    try:
        return source_filter({key: values})
    except ValueError:
        raise DatafariError(label, "'metadata_filter_values' is a list of 1 to 1000 strings.") from None


def top_k(value: Any, label: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TOP_K):
        raise DatafariError(label, f"'top_k' is a whole number from 1 to {MAX_TOP_K}.")
    return value


def temperature(value: Any, label: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 2:
        raise DatafariError(label, "'temperature' is a number from 0 to 2.")
    return float(value)


def flag(name: str, value: Any, label: str) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise DatafariError(label, f"'{name}' is true or false.")
    return value


def user_id(value: Any, label: str) -> str | None:
    if value is not None and (not isinstance(value, str) or len(value) > 200):
        raise DatafariError(label, "'user_id' is a string of at most 200 characters.")
    return value


def history_filter(value: Any, label: str) -> HistoryFilter:
    return _history_filter(value, label)


def _history_filter(value: Any, label: str) -> HistoryFilter:
    if value is None:
        return EVERY_MESSAGE
    bad = DatafariError(
        label,
        f'\'history_filter\' is {{"block_classes": [names], "metadata": {{name: [values]}}}}, '
        f"at most {MAX_TAGS} of each.",
    )
    if not isinstance(value, dict) or set(value) - {"block_classes", "metadata"}:
        raise bad
    classes, tags = value.get("block_classes"), value.get("metadata", {})
    if classes is not None and (
        not isinstance(classes, list)
        or len(classes) > MAX_TAGS
        or not all(isinstance(c, str) and TAG_NAME.match(c) for c in classes)
    ):
        raise bad
    if not isinstance(tags, dict) or len(tags) > MAX_TAGS:
        raise bad
    for key, values in tags.items():
        if not TAG_NAME.match(key) or not isinstance(values, list) or not values:
            raise bad
        if not all(isinstance(v, str) and len(v) <= 200 for v in values):
            raise bad
    return HistoryFilter(None if classes is None else frozenset(classes), {k: frozenset(v) for k, v in tags.items()})
