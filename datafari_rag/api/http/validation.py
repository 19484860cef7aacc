"""Validation of every request parameter; a bad one becomes a :class:`DatafariError` with a reason."""

from __future__ import annotations

import re
from typing import Any

from ...errors import DatafariError
from ...prompts import FORMATS, LANGUAGES

ROLES = ("user", "assistant", "system", "tool")
MAX_HISTORY = 100
# chat-core's message fields besides its text: a UI's block kind, tags, an agent's tool exchange
MESSAGE_EXTRAS = {"block_class", "metadata", "tool_calls", "tool_call_id", "name"}
MAX_TAGS = 20
TAG_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
MAX_ID_CHARS = 2048


def parse_lang(value: Any, label: str = "ragBadRequest") -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise DatafariError(label, "'lang' must be a string.")
    code = value.strip().lower().replace("_", "-").split("-")[0]
    if code not in LANGUAGES:
        raise DatafariError(label, "'lang' must be an ISO 639-1 language code (en, fr, de…).")
    return code


def parse_format(value: Any) -> str | None:
    if value is None or value == "" or value == "default":  # Datafari's "default": no format instruction
        return None
    if value not in FORMATS:
        raise DatafariError("ragBadRequest", f"'format' must be one of {', '.join(FORMATS)}.")
    return str(value)


def parse_id(value: Any, label: str = "ragBadRequest") -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID_CHARS:
        raise DatafariError(label, f"'id' must be a non-empty string of at most {MAX_ID_CHARS} characters.")
    return value


def parse_query(value: Any, max_length: int, name: str = "query") -> str:
    if not isinstance(value, str):
        raise DatafariError("ragBadRequest", f"'{name}' is required and must be a string.")
    if not value.strip():
        raise DatafariError("ragBadRequest", f"'{name}' is empty.")
    if len(value) > max_length:
        raise DatafariError("ragBadRequest", f"'{name}' is longer than {max_length} characters.")
    return value


SEARCH_TYPES = ("rag", "gpt", "agentic", "pa")


def parse_search_type(value: Any, label: str = "ragBadRequest") -> str:
    """chat-core's ``search_type``: rag (the default), gpt (the conversation only), agentic (tools;
    ``pa``, chat-core's name for it, is read as agentic)."""
    if value is None or value == "":
        return "rag"
    if value not in SEARCH_TYPES:
        raise DatafariError(label, f"'search_type' must be one of {', '.join(SEARCH_TYPES)}.")
    return "agentic" if value == "pa" else str(value)


def parse_prompt(value: Any, max_length: int) -> str | None:
    """Datafari 6.1's ``prompt``: the question the LLM answers when it is not the query searched."""
    return None if value is None else parse_query(value, max_length, "prompt")


def parse_history(value: Any, label: str = "ragBadRequest") -> list[dict[str, Any]]:
    """Chat history as chat messages: Datafari 6.2's ``{role, content}`` or 7.0's ``{role, message}``,
    with chat-core's ``block_class``, ``metadata`` and tool exchange (``rag/history.py`` filters them)."""
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_HISTORY:
        raise DatafariError(label, f"'history' must be a list of at most {MAX_HISTORY} messages.")
    history = []
    for i, message in enumerate(value):
        text = None
        if isinstance(message, dict) and not set(message) - {"role", "content", "message"} - MESSAGE_EXTRAS:
            texts = [message[k] for k in ("content", "message") if k in message]
            text = texts[0] if len(texts) == 1 else None
            if text is None and message.get("tool_calls") and all(t is None for t in texts):
                text = ""  # an agent's call without text (OpenAI's content: null)
        if not isinstance(text, str) or message.get("role") not in ROLES:
            raise DatafariError(
                label,
                f'\'history[{i}]\' must be {{"role": one of {", ".join(ROLES)}, "content" (or "message"): a string}}.',
            )
        history.append({"role": message["role"], "content": text, **_message_extras(message, f"history[{i}]", label)})
    return history


def _message_extras(message: dict[str, Any], where: str, label: str) -> dict[str, Any]:
    """A history message's chat-core fields, checked."""
    extras: dict[str, Any] = {}
    block_class = message.get("block_class")
    if block_class is not None:
        if not isinstance(block_class, str) or not TAG_NAME.match(block_class):
            raise DatafariError(label, f"'{where}.block_class' is a name of 1 to 64 letters, digits or _.:-")
        extras["block_class"] = block_class
    tags = message.get("metadata")
    if tags is not None:
        if (
            not isinstance(tags, dict)
            or len(tags) > MAX_TAGS
            or not all(isinstance(k, str) and TAG_NAME.match(k) for k in tags)
            or not all(isinstance(v, str | int | float | bool) and len(str(v)) <= 200 for v in tags.values())
        ):
            raise DatafariError(
                label, f"'{where}.metadata' is an object of at most {MAX_TAGS} names to strings, numbers or booleans."
            )
        extras["metadata"] = dict(tags)
    calls = message.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list) or message["role"] != "assistant":
            raise DatafariError(label, f"'{where}.tool_calls' is a list, on an assistant message.")
        extras["tool_calls"] = len(calls)
    for name in ("tool_call_id", "name"):
        text = message.get(name)
        if text is not None:
            if not isinstance(text, str) or len(text) > 200:
                raise DatafariError(label, f"'{where}.{name}' is a string of at most 200 characters.")
            extras[name] = text
    return extras


FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
SORT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s+(asc|desc)$")
# The six ManifoldCF fields: never returned, faceted, highlighted, sorted or queried for a client
ACL_FIELD = re.compile(r"(allow|deny)_token_", re.IGNORECASE)


def names_acl_field(text: str) -> bool:
    """Whether ``text``, a field of an answer, is one of the ACL fields (never shown to a client)."""
    return bool(ACL_FIELD.search(text.replace("\\", "")))


def field_list(value: str, name: str) -> str:
    """A comma-separated list of field names, the shape the API takes (which fields a user may
    have returned is Solr's door's to judge: never an ACL field)."""
    fields = [f.strip() for f in value.split(",") if f.strip()]
    if not fields or not all(f == "score" or f == "*" or FIELD_NAME.match(f) for f in fields):
        raise DatafariError("ragBadRequest", f"'{name}' must be a comma-separated list of field names.")
    return ",".join(fields)


def sort_clause(value: str) -> str:
    """``field asc|desc``, the shape the API takes (the field is judged by Solr's door)."""
    found = SORT.match(value.strip())
    if not found:
        raise DatafariError("ragBadRequest", "'sort' must be 'field asc' or 'field desc'.")
    return value.strip()


def without_acl_fields(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Documents as a client sees them: ``fl=*`` would otherwise return their ACL tokens."""
    return [{k: v for k, v in d.items() if not names_acl_field(k)} for d in docs]


def bounded_int(value: str | None, name: str, low: int, high: int, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise DatafariError("ragBadRequest", f"'{name}' must be an integer.") from None
    if not low <= number <= high:
        raise DatafariError("ragBadRequest", f"'{name}' must be between {low} and {high}.")
    return number
