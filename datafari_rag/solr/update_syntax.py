"""Solr's JSON update syntax, parsed: what a ``POST /update`` body asks for.

Accepts a list of documents, or an object whose keys (repeatable, as in Solr) are ``add``
(``{"doc": {...}, "commitWithin"?}``), ``delete`` (``{"id": …}``, ``{"id": [...]}``,
``{"query": …}`` or a list of ids), ``commit`` and ``optimize`` (accepted, ignored).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class UpdateCommands:
    adds: list[Any] = field(default_factory=list)  # documents, validated one by one by the indexer
    ids: list[str] = field(default_factory=list)  # ids to delete
    queries: list[str] = field(default_factory=list)  # delete-by-query queries
    commit: bool = False
    commit_within: int | None = None


def _plain(value: Any) -> Any:
    """Key/value pairs (kept as pairs so that keys may repeat) back to dicts and lists."""
    if isinstance(value, list) and value and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        return {k: _plain(v) for k, v in value}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def parse(raw: bytes) -> UpdateCommands:
    """The commands of a request body; raises ValueError when malformed (nested too deeply included)."""
    try:
        return _parse(raw)
    except RecursionError:
        raise ValueError("the body is nested too deeply") from None


def _parse(raw: bytes) -> UpdateCommands:
    text = raw.decode("utf-8", errors="surrogateescape")  # bad bytes fail their document, not the batch
    body = json.loads(text, object_pairs_hook=lambda pairs: pairs)
    commands = UpdateCommands()
    if isinstance(body, list) and not (body and all(isinstance(p, tuple) for p in body)):
        commands.adds = [_plain(d) for d in body]
        return commands
    for key, value in body if isinstance(body, list) else []:
        value = _plain(value)
        if key == "add":
            if not isinstance(value, dict) or "doc" not in value:
                raise ValueError("'add' must be {\"doc\": {...}}")
            commands.adds.append(value["doc"])
            if isinstance(value.get("commitWithin"), int):
                commands.commit_within = value["commitWithin"]
        elif key == "delete":
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str):
                    commands.ids.append(item)
                elif isinstance(item, dict) and "id" in item:
                    commands.ids += item["id"] if isinstance(item["id"], list) else [item["id"]]
                elif isinstance(item, dict) and isinstance(item.get("query"), str):
                    commands.queries.append(item["query"])
                else:
                    raise ValueError('\'delete\' takes an id, a list of ids, {"id": …} or {"query": …}')
        elif key == "commit":
            commands.commit = True
        elif key != "optimize":
            raise ValueError(f"unknown update command '{key}'")
    if not all(isinstance(i, str) and i and _is_text(i) for i in commands.ids):
        raise ValueError("ids to delete must be non-empty strings of valid text")
    if not all(_is_text(q) for q in commands.queries):
        raise ValueError("delete queries must be valid text")
    return commands


def _is_text(value: str) -> bool:
    """No lone surrogate and no undecodable byte (both would reach Solr as garbage)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
