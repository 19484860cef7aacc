"""Indexing jobs: documents indexed in the background, their progress kept in the relational store
so that any worker answers for them (``GET …/index/jobs/<id>``, its event stream), and POSTed to
the caller's URL when one is given.

A job runs in a thread of the worker that received it, through the same loop as
``datafari-rag index`` (:func:`.corpus.index_documents`). Its input (the JSON documents, or the
uploaded files) is kept in a folder of its own until it ends, and its worker beats a heartbeat:
a job whose worker died is taken over at once by another process's keeper, and resumed from its
folder or, the folder out of reach, ended with the counts Solr holds (``job_keeper.py``).
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import uuid
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select, update
from sqlalchemy.orm import sessionmaker

from ..metrics import INDEX_JOBS
from ..paths import var_dir
from ..store import StoreUnavailable, transaction
from ..store.schema import IndexJob
from .callbacks import post_progress
from .corpus import CorpusReport, index_documents
from .files import all_documents
from .indexer import Indexer

log = logging.getLogger(__name__)
MAX_ERRORS = 100  # errors a job keeps (each "id: why"); the count goes on
STALE_AFTER = timedelta(minutes=10)  # no process beat for it so long: no keeper anywhere took it over
DOCUMENTS = ".documents.jsonl"  # a JSON job's documents, in its folder (no upload is named with a dot first)
FIELDS = ".fields.json"  # the form's fields an upload job adds to each file's document


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def as_dict(row: IndexJob) -> dict[str, Any]:
    """A job as the API shows it."""
    status = row.status
    alive = row.heartbeat_at or row.updated_at
    if status == "running" and datetime.now(UTC) - _utc(alive) > STALE_AFTER:
        status = "failed"  # its worker stopped and no process took it over: nothing will move it
    percent = round(100.0 * row.done / row.total, 1) if row.total else 100.0
    return {
        "id": row.id,
        "status": status,
        "percent": percent,
        "documents": row.done,
        "total": row.total,
        "chunks": row.chunks,
        "failed": row.failed,
        "errors": list(row.errors),
        "workflow": row.workflow_id,
        "created_at": _utc(row.created_at).isoformat(),
        "updated_at": _utc(row.updated_at).isoformat(),
    }


class JobStore:
    def __init__(self, engine: Engine) -> None:
        self.sessions = sessionmaker(engine, expire_on_commit=False)

    def _run(self, work: Any) -> Any:
        with transaction(self.sessions, "the job store") as session:
            return work(session)

    def create(
        self,
        username: str,
        total: int,
        workflow_id: str | None,
        callback: str | None,
        job_id: str | None = None,
        worker: str | None = None,
        folder: str | None = None,
        ids: list[str] | None = None,
    ) -> dict[str, Any]:
        now = datetime.now(UTC)
        row = IndexJob(
            id=job_id or str(uuid.uuid4()),
            worker=worker,
            heartbeat_at=now,
            folder=folder,
            ids=ids,
            username=username,
            workflow_id=workflow_id,
            status="running",
            total=total,
            done=0,
            chunks=0,
            failed=0,
            errors=[],
            callback_url=callback,
            created_at=now,
            updated_at=now,
        )

        def add(session: Any) -> dict[str, Any]:
            session.add(row)
            session.flush()
            return as_dict(row)

        return self._run(add)

    def record(self, job_id: str, report: CorpusReport, status: str = "running") -> dict[str, Any]:
        def write(session: Any) -> dict[str, Any]:
            row = session.get(IndexJob, job_id)
            row.done, row.chunks, row.failed = report.added + report.failed, report.chunks, report.failed
            row.errors = report.errors[:MAX_ERRORS]
            row.status, row.updated_at = status, datetime.now(UTC)
            row.heartbeat_at = row.updated_at
            if status != "running":
                row.folder = None  # removed by its runner: nothing to resume
            return as_dict(row)

        return self._run(write)

    def beat(self, worker: str) -> None:
        """The running jobs of ``worker`` are still being run."""

        def write(session: Any) -> None:
            session.execute(
                update(IndexJob)
                .where(IndexJob.worker == worker, IndexJob.status == "running")
                .values(heartbeat_at=datetime.now(UTC))
            )

        self._run(write)

    def running(self) -> list[IndexJob]:
        """Every running job, as stored (detached rows)."""
        return list(
            self._run(lambda session: session.scalars(select(IndexJob).where(IndexJob.status == "running")).all())
        )

    def claim(self, job: IndexJob, worker: str) -> bool:
        """Takes the job over from its worker (as ``job`` shows it) for ``worker``; False when
        another process took it first, or it ended meanwhile."""
        was = IndexJob.worker.is_(None) if job.worker is None else IndexJob.worker == job.worker

        def write(session: Any) -> bool:
            done = session.execute(
                update(IndexJob)
                .where(IndexJob.id == job.id, IndexJob.status == "running", was)
                .values(worker=worker, heartbeat_at=datetime.now(UTC))
            )
            return bool(done.rowcount == 1)

        return bool(self._run(write))

    def get(self, job_id: str, username: str | None) -> dict[str, Any] | None:
        """The job, if it is ``username``'s (None: anyone's, for an administrator)."""

        def read(session: Any) -> dict[str, Any] | None:
            query = select(IndexJob).where(IndexJob.id == job_id)
            if username is not None:
                query = query.where(IndexJob.username == username)
            row = session.scalars(query).first()
            return as_dict(row) if row else None

        return self._run(read)


def start_job(
    store: JobStore,
    job: dict[str, Any],
    indexer: Indexer,
    documents: Iterable[dict[str, Any] | Exception],
    callback: str | None,
    folder: Path | None = None,
    report: CorpusReport | None = None,
) -> threading.Thread:
    """Runs the job in a thread: progress recorded (and called back) after every batch, then its
    end; any failure of the run ends the job as failed with its reason, never silently. Its
    ``folder`` is removed when it ends; ``report``: what an earlier run did (a resumed job)."""
    settings = indexer.settings

    def tell(state: dict[str, Any]) -> None:
        if callback:
            post_progress(callback, {"job": state}, settings)

    def run() -> None:
        done = report or CorpusReport()
        INDEX_JOBS.inc()
        try:
            done = index_documents(
                indexer,
                documents,
                total=job["total"],
                progress=False,
                on_progress=lambda r: tell(store.record(job["id"], r)),
                report=done,
            )
            tell(store.record(job["id"], done, "done"))
        except Exception as exc:  # the job ends, and says why
            log.exception("indexing job %s failed", job["id"])
            done.errors.append(f"the job stopped: {type(exc).__name__}")
            try:
                tell(store.record(job["id"], done, "failed"))
            except StoreUnavailable:
                log.error("indexing job %s: its end could not be recorded", job["id"])
        finally:
            INDEX_JOBS.dec()
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)

    thread = threading.Thread(target=run, name=f"index-job-{job['id'][:8]}", daemon=True)
    thread.start()
    return thread


def job_folder(job_id: str) -> Path:
    """The folder that keeps a job's input until it ends (``var/jobs/<id>``), made readable by this
    user only: it holds documents that may be private, as the temporary folder it replaced did."""
    jobs = var_dir() / "jobs"
    jobs.mkdir(mode=0o700, parents=True, exist_ok=True)
    jobs.chmod(0o700)
    folder = jobs / job_id
    folder.mkdir(mode=0o700)
    return folder


def keep_documents(folder: Path, documents: list[dict[str, Any]]) -> None:
    """A JSON job's documents, kept in its folder until it ends."""
    with open(folder / DOCUMENTS, "w", encoding="utf-8") as out:
        for doc in documents:
            out.write(json.dumps(doc, ensure_ascii=False) + "\n")


def kept_documents(folder: Path) -> Iterator[dict[str, Any] | Exception]:
    """The documents of a job's folder: its JSON documents, or its uploaded files, each named by
    its file (``upload://<name>``) and given the form's fields."""
    if (folder / DOCUMENTS).exists():
        with open(folder / DOCUMENTS, encoding="utf-8") as lines:
            for line in lines:
                yield json.loads(line)
        return
    fields = json.loads((folder / FIELDS).read_text()) if (folder / FIELDS).exists() else {}
    paths = sorted(p for p in folder.iterdir() if p.name != FIELDS)
    for doc in all_documents(paths):
        if isinstance(doc, Exception):
            yield Exception(str(doc).replace(str(folder) + "/", ""))
            continue
        if doc.get("source") == "files":  # not a BEIR line: named by its file, not the folder
            name = doc["url"].rsplit("/", 1)[-1]
            doc = {**doc, "id": f"upload://{name}", "url": f"upload://{name}", "source": "upload"}
        yield {**doc, **fields}
