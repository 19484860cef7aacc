"""``POST /update`` (and ``{prefix}/update``): Solr's JSON update syntax, through the processor.

Accepts a list of documents; an object whose keys (repeatable, as in Solr) are ``add``
(``{"doc": {...}, "commitWithin"?}``), ``delete`` (``{"id": …}``, ``{"id": [...]}``,
``{"query": …}`` or a list of ids) and ``commit``; and the ``commit`` / ``commitWithin`` request
parameters. The response says, per document, what happened.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from ..indexing.processor import ChunkProcessor
from ..rag.errors import MESSAGES
from ..security import SecurityError
from ..security.identity import current_access
from ..services import get_services
from ..solr import SolrError
from .responses import error_json

bp = Blueprint("update", __name__)


def _error(label: str, reason: str) -> Response:
    code, message = MESSAGES[label]
    response = error_json(code, label, message, reason)
    response.status_code = code
    return response


def parse_commands(raw: bytes) -> tuple[list[Any], list[Any], list[str], bool, int | None]:
    """(documents to add, ids to delete, delete queries, commit, commitWithin) of a request body."""
    text = raw.decode("utf-8", errors="surrogateescape")  # bad bytes fail their document, not the batch
    body = json.loads(text, object_pairs_hook=lambda pairs: pairs)
    adds: list[Any] = []
    ids: list[Any] = []
    queries: list[str] = []
    commit, within = False, None

    def plain(value: Any) -> Any:  # pairs back to dicts/lists
        if isinstance(value, list) and all(isinstance(p, tuple) and len(p) == 2 for p in value) and value:
            return {k: plain(v) for k, v in value}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    if isinstance(body, list) and not (body and all(isinstance(p, tuple) for p in body)):
        return [plain(d) for d in body], ids, queries, commit, within
    for key, value in body if isinstance(body, list) else []:
        value = plain(value)
        if key == "add":
            if not isinstance(value, dict) or "doc" not in value:
                raise ValueError("'add' must be {\"doc\": {...}}")
            adds.append(value["doc"])
            if isinstance(value.get("commitWithin"), int):
                within = value["commitWithin"]
        elif key == "delete":
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str):
                    ids.append(item)
                elif isinstance(item, dict) and "id" in item:
                    ids += item["id"] if isinstance(item["id"], list) else [item["id"]]
                elif isinstance(item, dict) and isinstance(item.get("query"), str):
                    queries.append(item["query"])
                else:
                    raise ValueError('\'delete\' takes an id, a list of ids, {"id": …} or {"query": …}')
        elif key == "commit":
            commit = True
        elif key not in ("optimize",):
            raise ValueError(f"unknown update command '{key}'")
    if not all(isinstance(i, str) and i for i in ids):
        raise ValueError("ids to delete must be non-empty strings")
    return adds, ids, queries, commit, within


def _may_write() -> None:
    """Writing to the index: the users of ``security.update.users`` when it is set, else only
    callers on this machine (an indexer beside the sidecar). Raises SecurityError."""
    settings = get_services().settings
    allowed = {u.strip() for u in settings.update_users.split(",") if u.strip()}
    if allowed:
        if current_access().username not in allowed:
            raise SecurityError(403, "This user may not write to the index.")
    elif request.remote_addr not in ("127.0.0.1", "::1"):
        raise SecurityError(403, "Updates are accepted from this machine only (see security.update.users).")


@bp.post("/update")
def update() -> Response:
    _may_write()
    services = get_services()
    try:
        adds, ids, queries, commit, within = parse_commands(request.get_data())
    except (ValueError, UnicodeDecodeError) as exc:
        return _error("updateBadRequest", f"Malformed update: {exc}")
    commit = commit or request.args.get("commit") == "true"
    if request.args.get("commitWithin"):
        try:
            within = int(request.args["commitWithin"])
        except ValueError:
            return _error("updateBadRequest", "'commitWithin' must be an integer.")
    processor = ChunkProcessor(services.solr, services.settings, current_app.extensions["outbox"])
    try:
        deleted = processor.delete_ids(ids, commit) if ids else 0
        for query in queries:
            deleted += processor.delete_query(query, commit)
        results = processor.add(adds, commit, within) if adds else []
    except SolrError as exc:
        return _error("updateTechnicalError", str(exc))
    failed = sum(1 for r in results if r.status == "error")
    return jsonify(
        {
            "responseHeader": {"status": 0 if not failed else 1},
            "added": len(results) - failed,
            "failed": failed,
            "deleted": deleted,
            "results": [r.as_dict() for r in results],
        }
    )
