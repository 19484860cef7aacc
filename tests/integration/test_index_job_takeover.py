"""Indexing jobs outlive their worker (indexing/job_keeper.py), on the real Solr: a sidecar killed
in the middle of a job (SIGKILL to gunicorn's master and worker, as a crash or an OOM kill does)
and started again resumes the job from its kept input at once, skips what Solr already holds, and
ends it `done` with every document indexed whole; a job whose input is on another machine ends
`failed` with the counts Solr holds; a live worker's job is never taken."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy import update
from sqlalchemy.orm import Session

from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.indexing.job_keeper import JobKeeper, identity, whole
from datafari_rag.indexing.jobs import JobStore
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.store.database import migrate, open_engine
from datafari_rag.store.schema import IndexJob
from datafari_rag.testing.servers import free_port, served_process, settings_env
from tests.integration.conftest import mapped_users

API = "/Datafari/rest/v2.0"
WRITER = {"X-Remote-User": "indexer"}


@pytest.fixture(scope="module")
def world(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    folder = tmp_path_factory.mktemp("takeover")
    mine = mapped_users(settings, folder, "takeover", {"indexer": ["ops"]})
    bootstrap(solr, mine)
    return mine.replace(store_url=f"sqlite:///{folder / 'store.db'}", update_users="indexer", server_workers=1)


def docs(prefix: str, n: int) -> list[dict[str, Any]]:
    text = "The cooling pump {i} of {p} is inspected on Mondays; its filter is changed every month. "
    return [
        {"id": f"{prefix}-{i}", "title": f"Pump {i}", "exactContent": text.format(i=i, p=prefix) * 12} for i in range(n)
    ]


def job_of(base: str, job_id: str) -> dict[str, Any]:
    got = requests.get(f"{base}{API}/index/jobs/{job_id}", headers=WRITER, timeout=30)
    job: dict[str, Any] = got.json()["content"]["job"]
    return job


def crash(server: subprocess.Popen[bytes]) -> None:
    """gunicorn's master and its workers killed at once, without a goodbye."""
    subprocess.run(["pkill", "-KILL", "-P", str(server.pid)], check=False)
    server.kill()
    server.wait(timeout=30)


def stored(world: Settings, job_id: str) -> IndexJob:
    """The job's row, as the store holds it."""
    engine = open_engine(world.store_url)
    try:
        with Session(engine) as session:
            return session.get_one(IndexJob, job_id)
    finally:
        engine.dispose()


def test_a_job_whose_sidecar_died_is_resumed_at_once_by_the_next_one(
    world: Settings, solr: SolrClient, tmp_path: Path
) -> None:
    batch = docs("crash", 400)
    first = world.replace(server_port=free_port())
    base = f"http://127.0.0.1:{first.server_port}"
    with served_process(["datafari_rag.cli", "serve"], f"{base}/health", settings_env(first)) as server:
        created = requests.post(f"{base}{API}/index/jobs", json={"documents": batch}, headers=WRITER, timeout=60)
        assert created.status_code == 202, created.text
        job_id = created.json()["content"]["job"]["id"]
        deadline = time.monotonic() + 120
        while (seen := job_of(base, job_id))["documents"] == 0:  # its first batch is in
            assert seen["status"] == "running" and time.monotonic() < deadline, seen
            time.sleep(0.05)
        crash(server)
    assert seen["status"] == "running" and seen["documents"] < len(batch), seen
    folder = Path(stored(world, job_id).folder or "")
    assert folder.is_dir(), "the job's input is kept until it ends"

    second = world.replace(server_port=free_port())
    base = f"http://127.0.0.1:{second.server_port}"
    log = tmp_path / "second.log"
    with served_process(["datafari_rag.cli", "serve"], f"{base}/health", settings_env(second), log) as server:
        started = time.monotonic()
        taken = None
        while (job := job_of(base, job_id))["status"] == "running":
            worker = stored(world, job_id).worker or ""
            if taken is None and worker.split(":")[1] != str(server.pid):
                taken = time.monotonic() - started
            assert time.monotonic() - started < 180, job
            time.sleep(0.2)
    print(f"\nkilled at {seen['documents']} of {len(batch)}; taken over {taken} s after the restart; {job}")
    assert job["status"] == "done" and job["documents"] == len(batch) and job["failed"] == 0, job
    assert taken is not None and taken < 15, f"taken over after {taken} s"  # one look of the keeper, not minutes
    assert not folder.exists(), "the job's input is removed once it ends"
    [resumed] = re.findall(r"resumed here, (\d+) of 400 documents already indexed", log.read_text())
    assert int(resumed) >= seen["documents"]  # what Solr held was not sent again
    indexer = Indexer.of(solr, world)
    assert whole(indexer, [d["id"] for d in batch]) == {d["id"] for d in batch}


@pytest.fixture
def jobs(world: Settings) -> Any:
    engine = open_engine(world.store_url)
    migrate(engine)
    yield JobStore(engine)
    engine.dispose()


def test_a_job_out_of_reach_ends_failed_with_what_solr_holds_and_a_live_ones_is_left_alone(
    world: Settings, solr: SolrClient, jobs: JobStore
) -> None:
    indexer = Indexer.of(solr, world)
    batch = docs("away", 5)
    assert [r.status for r in indexer.add(batch[:3], commit=True)] == ["ok"] * 3
    ids = [d["id"] for d in batch]
    away = jobs.create("indexer", 5, None, None, worker="elsewhere:1:1", ids=ids)["id"]
    lost_here = jobs.create("indexer", 5, None, None, worker=f"{socket.gethostname()}:999999999:1", ids=ids)["id"]
    mine = jobs.create("indexer", 5, None, None, worker=identity(), ids=ids)["id"]
    quiet = jobs.create("indexer", 5, None, None, worker="elsewhere:2:2", ids=ids)["id"]
    long_ago = datetime.now(UTC) - timedelta(minutes=1)
    with jobs.sessions.begin() as session:  # the machine's worker has not beaten for a minute
        session.execute(update(IndexJob).where(IndexJob.id == away).values(heartbeat_at=long_ago))

    keeper = JobKeeper(lambda: jobs, lambda workflow: indexer)
    taken = keeper.look()
    assert sorted(taken) == sorted([away, lost_here])  # the dead process at once, the quiet machine after STALE
    for job_id in (away, lost_here):
        ended = jobs.get(job_id, None)
        assert ended is not None and ended["status"] == "failed", ended
        assert ended["failed"] == 2 and ended["documents"] == 5  # 3 of 5 in the index, as Solr says
        assert "3 of 5 documents are in the index" in ended["errors"][-1]
    for job_id in (mine, quiet):
        left = jobs.get(job_id, None)
        assert left is not None and left["status"] == "running", left
    assert keeper.look() == []  # nothing more to take
