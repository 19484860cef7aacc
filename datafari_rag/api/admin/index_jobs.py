"""Indexing jobs over REST, for the writers of ``/update`` (``security.update.users``):

- ``POST …/index/jobs``: JSON ``{"documents": [...], "workflow"?, "callback"?, "visibility"?}`` or
  a multipart form (``files``: txt, md, html, pdf, docx, jsonl; ``fields``: JSON merged into each
  file's document, e.g. its ACL tokens; ``workflow``; ``callback``; ``visibility``) → 202 with
  the job. ``workflow``: its chunker cuts the documents. ``visibility`` says who may read the
  documents that carry no ACL field of their own: ``private`` (the default: the writer only,
  through their own token), ``group:<token>`` (a token the writer holds) or ``public`` — never
  public by accident.
- ``GET …/index/jobs/<id>``: its progress (percentage, documents and chunks done, errors).
- ``GET …/index/jobs/<id>/events``: the same progress as Server-Sent Events until the job ends.

A job is its writer's: another user's is found as one that does not exist (administrators see
every job).
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, request, stream_with_context
from werkzeug.datastructures import FileStorage
from werkzeug.utils import secure_filename

from ...config import ConfigError
from ...errors import DatafariError
from ...indexing.callbacks import CallbackRefused, check_callback
from ...indexing.files import SUFFIXES
from ...indexing.indexer import Indexer
from ...indexing.job_keeper import identity
from ...indexing.jobs import FIELDS, JobStore, job_folder, keep_documents, kept_documents, start_job
from ...indexing.visibility import has_acl, readable_by
from ...security.authority import own_token
from ...store import StoreUnavailable
from ..datafari.update import may_write
from ..http.answers import IndexJobAnswer
from ..http.auth import current_access, is_admin
from ..http.context import get_services
from ..http.contract import JSON, Reply, endpoint, refusals
from ..http.contract import json as json_reply
from ..http.errors import ok_content
from ..http.shapes import IndexJobRequest, read
from ..http.store_calls import store_call

bp = Blueprint("index_jobs", __name__)
POLL = 0.5  # seconds between two looks at a running job's progress
KEEP_ALIVE = 15.0


def _bad(message: str) -> DatafariError:
    return DatafariError("jobBadRequest", message)


def _jobs() -> JobStore:
    return store_call(get_services().store.jobs)


def _indexer(workflow_id: Any) -> Indexer:
    """The configuration's indexer, or one cutting with the workflow's chunker."""
    if workflow_id is not None and not isinstance(workflow_id, str):
        raise _bad("'workflow' is a workflow's id.")
    try:
        return store_call(get_services().indexer_of, workflow_id)
    except ConfigError as exc:
        raise _bad(f"The workflow cannot index: {exc}") from None


def _callback(value: Any) -> str | None:
    if value is None or value == "":
        return None
    try:
        return check_callback(value, get_services().settings)
    except CallbackRefused as exc:
        raise _bad(str(exc)) from None


def _json_job() -> tuple[list[Any], Any, Any, Any]:
    body = read(IndexJobRequest, "jobBadRequest")
    return body.documents, body.workflow, body.callback, body.visibility


def protection(visibility: Any, docs_have_acl: bool) -> Callable[[Any], Any]:
    """What ``visibility`` adds to a document that carries no ACL field of its own (checked before
    anything is saved): the writer's own token, a group token the writer holds, or nothing."""
    access = current_access()
    choice = "private" if visibility in (None, "") else visibility
    tokens: list[str] | None
    if choice == "public":
        tokens = None
    elif choice == "private":
        if access.username is None:
            if docs_have_acl:
                return lambda doc: doc
            raise _bad(
                "'visibility': a writer without a name cannot keep documents private; send public, "
                "group:<token> or ACL fields."
            )
        tokens = [own_token(access.username)]
    elif isinstance(choice, str) and choice.startswith("group:"):
        token = choice.removeprefix("group:")
        if not token or token not in access.tokens:
            raise _bad("'visibility': group:<token> names a token you hold.")
        tokens = [token]
    else:
        raise _bad("'visibility' is private, public or group:<token>.")
    return readable_by(tokens)


# the multipart form _files_form reads
UPLOAD_FORM = {
    "type": "object",
    "properties": {
        "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
        "fields": {"type": "string", "description": "JSON added to each file's document"},
        "workflow": {"type": "string"},
        "callback": {"type": "string"},
        "visibility": {"type": "string", "description": "private (default), public or group:<token>"},
    },
}
THE_JOB = json_reply(IndexJobAnswer, "the job")


def _files_form() -> tuple[list[FileStorage], dict[str, Any], Any, Any, Any]:
    """The uploaded files and the form's fields, checked (nothing is saved yet)."""
    files = request.files.getlist("files")
    if not files:
        raise _bad("Send the files as 'files' parts of a multipart form.")
    fields: Any = {}
    if request.form.get("fields"):
        try:
            fields = json.loads(request.form["fields"])
        except ValueError:
            fields = None
        if not isinstance(fields, dict) or {"id", "exactContent"} & set(fields):
            raise _bad("'fields' is a JSON object of fields added to each file's document (not id or exactContent).")
    names: set[str] = set()
    for upload in files:
        name = secure_filename(upload.filename or "")
        if not name or Path(name).suffix.lower() not in SUFFIXES:
            raise _bad(f"{upload.filename!r}: files are {', '.join(sorted(SUFFIXES))}.")
        if name in names:
            raise _bad(f"{name!r} is sent twice.")
        names.add(name)
    form = request.form
    return files, fields, form.get("workflow"), form.get("callback"), form.get("visibility")


def _saved(files: list[FileStorage], fields: dict[str, Any], folder: Path) -> list[str] | None:
    """The files saved to the job's folder with the form's fields, kept until the job ends; the
    ids their documents will have (None when a JSON-lines file names its own)."""
    names = [secure_filename(upload.filename or "") for upload in files]
    for upload, name in zip(files, names, strict=True):
        upload.save(folder / name)
    (folder / FIELDS).write_text(json.dumps(fields))
    return None if any(n.lower().endswith(".jsonl") for n in names) else [f"upload://{n}" for n in names]


@bp.post("/index/jobs")
@endpoint(
    "Index documents (JSON) or files (multipart) in the background; 202 with the job",
    {202: THE_JOB, **refusals(400, 401, 403, 404, 413, 415, 503)},
    {JSON: IndexJobRequest, "multipart/form-data": UPLOAD_FORM},
)
def create_job() -> tuple[Response, int]:
    """Everything is checked before a file is saved or a job recorded: a refused job leaves nothing."""
    may_write()
    uploads: list[FileStorage] = []
    fields: dict[str, Any] = {}
    documents: Iterable[Any]
    if request.mimetype == "multipart/form-data":
        uploads, fields, workflow_id, callback, visibility = _files_form()
        total = len(uploads)
        protect = protection(visibility, has_acl(fields))
        fields = protect(fields)  # merged into every file's document
    else:
        documents, workflow_id, callback, visibility = _json_job()
        total = len(documents)
        protect = protection(visibility, all(has_acl(d) for d in documents))
        documents = [protect(d) for d in documents]
    limit = get_services().settings.jobs_max_documents
    if total > limit:
        raise _bad(f"A job holds at most {limit} documents or files (index.jobs.maxDocuments).")
    indexer = _indexer(workflow_id or None)
    url = _callback(callback)
    job_id = str(uuid.uuid4())
    username = current_access().username or "local"
    folder = job_folder(job_id)  # the job's input, kept until it ends: a job is resumed from it
    try:
        if uploads:
            ids = _saved(uploads, fields, folder)
            documents = kept_documents(folder)
        else:
            keep_documents(folder, list(documents))
            ids = [d["id"] if isinstance(d, dict) and isinstance(d.get("id"), str) else "" for d in documents]
        job = store_call(
            _jobs().create, username, total, workflow_id or None, url, job_id, identity(), str(folder), ids
        )
    except (DatafariError, OSError):
        shutil.rmtree(folder, ignore_errors=True)
        raise
    start_job(_jobs(), job, indexer, documents, url, folder)
    links = {"self": f"{request.path}/{job['id']}", "events": f"{request.path}/{job['id']}/events"}
    return ok_content({"job": job, "links": links}), 202


def _owned(job_id: str) -> dict[str, Any]:
    access = current_access()
    who = None if is_admin(access.username) else (access.username or "local")
    job = store_call(_jobs().get, job_id, who)
    if job is None:
        raise DatafariError("jobNotFound")
    return job


@bp.get("/index/jobs/<job_id>")
@endpoint(
    "A job's progress: percent, documents, chunks, failures, errors", {200: THE_JOB, **refusals(401, 403, 404, 503)}
)
def read_job(job_id: str) -> tuple[Response, int]:
    return ok_content({"job": _owned(job_id)}), 200


@bp.get("/index/jobs/<job_id>/events")
@endpoint(
    "A job's progress as Server-Sent Events (progress, then done)",
    {200: Reply("the events", {"text/event-stream": {"type": "string"}}), **refusals(401, 403, 404, 503)},
)
def job_events(job_id: str) -> Response:
    """``progress`` events as the job moves, then ``done`` (its last state) and the end."""
    job = _owned(job_id)
    store = _jobs()

    def events(state: dict[str, Any]) -> Iterator[str]:
        sent, quiet = None, time.monotonic()
        while True:
            if state != sent:
                name = "progress" if state["status"] == "running" else "done"
                yield f"event: {name}\ndata: {json.dumps(state)}\n\n"
                sent, quiet = state, time.monotonic()
                if name == "done":
                    return
            elif time.monotonic() - quiet > KEEP_ALIVE:
                yield ": keep-alive\n\n"
                quiet = time.monotonic()
            time.sleep(POLL)
            try:
                state = store.get(job_id, None) or state
            except StoreUnavailable:  # the store is away for a moment: the stream waits for it
                continue

    response = Response(stream_with_context(events(job)), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response
