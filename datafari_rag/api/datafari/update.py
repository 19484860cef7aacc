"""``POST /update`` (and ``{prefix}/update``): Solr's JSON update syntax, through the indexer.

The body is parsed by :mod:`datafari_rag.solr.update_syntax` (documents, deletes by id and by
query, commit); the ``commit`` / ``commitWithin`` request parameters are honoured too. The
response says, per document, what happened, and its status is true to the worst of them.
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, request

from ...errors import DatafariError
from ...indexing.indexer import DocResult
from ...solr import SolrError, update_syntax
from ..http.answers import Error, UpdateResult
from ..http.auth import current_access, is_admin
from ..http.context import get_services
from ..http.contract import REFUSALS, Param, endpoint, json, refusals

bp = Blueprint("update", __name__)


def may_write() -> None:
    """Writing to the index needs an explicit credential: an administrator or a user of
    ``security.update.users`` (identified by JWT or trusted header). Callers on this machine are
    trusted only with ``security.update.trustLocal`` (an opt-in: a local reverse proxy makes every
    client local)."""
    settings = get_services().settings
    allowed = {u.strip() for u in settings.update_users.split(",") if u.strip()}
    username = current_access().username
    if username is not None and (username in allowed or is_admin(username)):
        return
    if settings.update_trust_local and request.remote_addr in ("127.0.0.1", "::1"):
        return
    if username is None:
        raise DatafariError("authenticationFailed", "Updates need a credential: a user of security.update.users.")
    raise DatafariError(
        "accessForbidden", "Only administrators and the users of security.update.users may write to the index."
    )


# Solr's JSON update syntax: a list of documents, or an object of commands
UPDATE_BODY = {"oneOf": [{"type": "array", "items": {}}, {"type": "object"}]}
PER_DOCUMENT = json({"oneOf": [UpdateResult, Error]}, "per document, or a refusal")


@bp.post("/update")
@endpoint(
    "Index documents: Solr's JSON update syntax; parents to FileShare, chunks to VectorMain",
    {
        **refusals(*REFUSALS, 500),
        200: json(UpdateResult, "every document written whole: one result per document"),
        # refused documents (400) or a service failing for some (503): the results say which
        400: PER_DOCUMENT,
        503: PER_DOCUMENT,
    },
    UPDATE_BODY,
    params=(Param("commit", {"enum": ["true", "false"]}), Param("commitWithin", {"type": "integer"})),
)
def update() -> Response:
    may_write()
    indexer = get_services().indexer
    try:
        commands = update_syntax.parse(request.get_data())
    except (ValueError, UnicodeDecodeError) as exc:
        raise DatafariError("updateBadRequest", f"Malformed update: {exc}") from exc
    commit = commands.commit or request.args.get("commit") == "true"
    within = commands.commit_within
    if request.args.get("commitWithin"):
        try:
            within = int(request.args["commitWithin"])
        except ValueError:
            raise DatafariError("updateBadRequest", "'commitWithin' must be an integer.") from None
    try:
        deleted = indexer.delete_ids(commands.ids, commit)
        for query in commands.queries:
            try:
                deleted += indexer.delete_query(query, commit)
            except SolrError as exc:
                if exc.status != 400:
                    raise
                raise DatafariError(
                    "updateBadRequest", f"Solr cannot parse the delete query {query[:200]!r}.", detail=str(exc)
                ) from exc
        results = indexer.add(commands.adds, commit, within) if commands.adds else []
    except SolrError as exc:
        raise DatafariError("updateTechnicalError", "The index could not be written.", detail=str(exc)) from exc
    finally:
        cache = get_services().pipeline.cache
        if cache is not None:  # this process's writes are seen at once; others' at the next version check
            cache.clear()
    failed = sum(1 for r in results if r.status == "error")
    status = outcome(results)
    response = jsonify(
        {
            "responseHeader": {"status": 0 if status == 200 else status},
            "added": len(results) - failed,
            "failed": failed,
            "deleted": deleted,
            "results": [r.as_dict() for r in results],
        }
    )
    response.status_code = status
    return response


def outcome(results: list[DocResult]) -> int:
    """The request's HTTP status, true to its worst document: 200 only when every document was
    written whole (parent and chunks: FileShare's processor fails a write whose chunks fail);
    400 when documents were refused for what they hold; 503 when a service failed for some
    (send those again: their results say which)."""
    codes = {r.code or 503 for r in results if r.status == "error"}
    if codes:
        return 400 if codes == {400} else 503
    return 200
