"""Indexing jobs: documents indexed in the background, their progress kept in the relational store
so that any worker answers for them (``GET …/index/jobs/<id>``, its event stream), and POSTed to
the caller's URL when one is given.

A job runs in a thread of the worker that received it, through the same loop as
``datafari-rag index`` (:func:`.corpus.index_documents`). A job whose worker stopped (its progress
has not moved for :data:`STALE_AFTER` seconds) is reported as failed.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import sessionmaker

from ..metrics import INDEX_JOBS
from ..store import StoreUnavailable, transaction
from ..store.schema import IndexJob
from .callbacks import post_progress
from .corpus import CorpusReport, index_documents
from .indexer import Indexer

log = logging.getLogger(__name__)
MAX_ERRORS = 100  # errors a job keeps (each "id: why"); the count goes on
STALE_AFTER = timedelta(minutes=10)


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def as_dict(row: IndexJob) -> dict[str, Any]:
    """A job as the API shows it."""
    status = row.status
    if status == "running" and datetime.now(UTC) - _utc(row.updated_at) > STALE_AFTER:
        status = "failed"  # its worker stopped: nothing will move it again
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

    def create(self, username: str, total: int, workflow_id: str | None, callback: str | None) -> dict[str, Any]:
        now = datetime.now(UTC)
        row = IndexJob(
            id=str(uuid.uuid4()),
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
            return as_dict(row)

        return self._run(write)

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
) -> threading.Thread:
    """Runs the job in a thread: progress recorded (and called back) after every batch, then its
    end; any failure of the run ends the job as failed with its reason, never silently."""
    settings = indexer.settings

    def tell(state: dict[str, Any]) -> None:
        if callback:
            post_progress(callback, {"job": state}, settings)

    def run() -> None:
        report = CorpusReport()
        INDEX_JOBS.inc()
        try:
            report = index_documents(
                indexer,
                documents,
                total=job["total"],
                progress=False,
                on_progress=lambda r: tell(store.record(job["id"], r)),
            )
            tell(store.record(job["id"], report, "done"))
        except Exception as exc:  # the job ends, and says why
            log.exception("indexing job %s failed", job["id"])
            report.errors.append(f"the job stopped: {type(exc).__name__}")
            try:
                tell(store.record(job["id"], report, "failed"))
            except StoreUnavailable:
                log.error("indexing job %s: its end could not be recorded", job["id"])
        finally:
            INDEX_JOBS.dec()

    thread = threading.Thread(target=run, name=f"index-job-{job['id'][:8]}", daemon=True)
    thread.start()
    return thread
