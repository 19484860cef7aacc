"""Indexing jobs outlive the worker that ran them. Every serving process beats the heartbeat of its
own jobs and looks, as often, for running jobs whose worker is gone: on this machine, a process
that no longer exists (or another one under the same pid), at once; on another machine, one
whose heartbeat stopped for :data:`STALE`. It claims such a job (one process wins, by a
conditional update) and resumes it from the folder that keeps its input, skipping the documents
Solr already holds whole; a job whose folder is out of reach (another machine's) ends ``failed``
with the counts Solr holds. A job's state is then what Solr holds, never a worker's memory.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from .. import chunk_fields
from ..solr import admin
from ..store.schema import IndexJob
from .callbacks import post_progress
from .corpus import CorpusReport
from .indexer import Indexer
from .jobs import JobStore, kept_documents, start_job

log = logging.getLogger(__name__)
HEARTBEAT = 5.0  # seconds between two beats, and two looks for orphaned jobs
STALE = timedelta(seconds=30)  # another machine's worker that has not beaten for so long is gone
IDS_PER_GET = 200


def _started(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, /proc), or None if there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # field 22; the name before ")" may hold spaces


def identity() -> str:
    """This process, as a job's ``worker`` names it: host, pid and when the process started."""
    return f"{socket.gethostname()}:{os.getpid()}:{_started(os.getpid()) or 'unknown'}"


def gone(job: IndexJob, now: datetime) -> bool:
    """Whether the job's worker is gone: a process of this machine by its pid and start, another
    machine's by its heartbeat."""
    host, _, rest = (job.worker or "").partition(":")
    pid, _, started = rest.partition(":")
    if host == socket.gethostname() and pid.isdigit() and started != "unknown":
        return _started(int(pid)) != started
    beat = job.heartbeat_at or job.updated_at
    return now - (beat if beat.tzinfo else beat.replace(tzinfo=UTC)) > STALE


def whole(indexer: Indexer, ids: list[str]) -> set[str]:
    """The ids whose parent is in FileShare and whose first chunk is in VectorMain (real-time get:
    committed or not) — the documents of a job that need not be sent again."""
    parents: set[str] = set()
    for start in range(0, len(ids), IDS_PER_GET):
        parents |= {d["id"] for d in indexer.main.get(ids[start : start + IDS_PER_GET], "id")}
    if not parents:
        return set()
    shards = admin.shard_names(indexer.vectors.solr, indexer.vectors.name)
    firsts = sorted(f"{p}_0" for p in parents)
    chunked: set[str] = set()
    for start in range(0, len(firsts), IDS_PER_GET):
        got = indexer.vectors.get(firsts[start : start + IDS_PER_GET], chunk_fields.PARENT, shards)
        chunked |= {d[chunk_fields.PARENT] for d in got}
    return parents & chunked


class JobKeeper:
    """One per serving process: beats for its jobs, takes over those whose worker is gone."""

    def __init__(self, store: Callable[[], JobStore], indexer_for: Callable[[str | None], Indexer]) -> None:
        self.store = store
        self.indexer_for = indexer_for  # the indexer of a job's workflow (None: the configuration's)
        self.me = identity()

    def look(self) -> list[str]:
        """One beat and one look; returns the ids of the jobs taken over."""
        store = self.store()
        store.beat(self.me)
        now = datetime.now(UTC)
        taken = []
        for job in store.running():
            if job.worker == self.me or not gone(job, now) or not store.claim(job, self.me):
                continue
            taken.append(job.id)
            try:
                self._take_over(store, job)
            except Exception as exc:  # Solr down, say: the job ends, and says why
                log.exception("indexing job %s could not be taken over", job.id)
                store.record(
                    job.id, CorpusReport(errors=[f"the job's worker stopped; taking it over failed: {exc}"]), "failed"
                )
        return taken

    def _take_over(self, store: JobStore, job: IndexJob) -> None:
        indexer = self.indexer_for(job.workflow_id)
        done = whole(indexer, job.ids) if job.ids else set()
        folder = Path(job.folder) if job.folder else None
        if folder is None or not folder.is_dir():
            ended = self._end(store, job, done)
            if job.callback_url:
                post_progress(job.callback_url, {"job": ended}, indexer.settings)
            return
        log.warning(
            "indexing job %s: its worker stopped; resumed here, %d of %d documents already indexed",
            job.id,
            len(done),
            job.total,
        )
        documents = (d for d in kept_documents(folder) if isinstance(d, Exception) or d.get("id") not in done)
        state = {"id": job.id, "total": job.total}
        start_job(store, state, indexer, documents, job.callback_url, folder, CorpusReport(added=len(done)))

    @staticmethod
    def _end(store: JobStore, job: IndexJob, done: set[str]) -> dict[str, object]:
        """Ends a job that cannot be resumed here, with what Solr holds of it."""
        known = job.ids is not None
        added = len(done) if known else job.done - job.failed
        why = (
            f"the job's worker stopped and its input is not on this machine: {added} of {job.total} "
            "documents are in the index" + ("" if known else " (as last recorded)")
        )
        report = CorpusReport(added=added, failed=job.total - added, errors=[*job.errors, why][-100:])
        log.warning("indexing job %s: %s", job.id, why)
        return store.record(job.id, report, "failed")

    def start(self) -> threading.Thread:
        """Beats and looks every :data:`HEARTBEAT` seconds, in a daemon thread, from now on."""

        def loop() -> None:
            while True:
                try:
                    self.look()
                except Exception as exc:  # the store or Solr away: the next look tries again
                    log.warning("indexing jobs not looked after: %s", exc)
                time.sleep(HEARTBEAT)

        thread = threading.Thread(target=loop, name="job-keeper", daemon=True)
        thread.start()
        return thread
