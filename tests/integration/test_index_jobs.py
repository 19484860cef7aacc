"""Indexing jobs on the real Solr: JSON documents or uploaded files indexed in the background, the
progress as Server-Sent Events and POSTed to an allowed callback (retried, bounded), a workflow's
chunker used, and jobs and their documents seen only by whom they belong to."""

from __future__ import annotations

import io
import json
import random
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flask import Flask, request
from flask.testing import FlaskClient
from sqlalchemy import text

from datafari_rag.app import create_app
from datafari_rag.cli import main as cli
from datafari_rag.config import Settings
from datafari_rag.security.authority import own_token
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.store import StoreHandle
from datafari_rag.store.database import open_engine
from datafari_rag.testing.acl_harness import EVERY_TOKEN, layers_off
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import serve
from tests.integration.conftest import PASSWORD, board_world, cli_environment
from tests.integration.test_indexing import chunks_of

API = "/Datafari/rest/v2.0"
WRITER = {"X-Remote-User": "indexer"}


class Recorder:
    """A caller's server receiving a job's callbacks; it fails the first ``failures`` posts."""

    def __init__(self, failures: int = 0) -> None:
        self.posts: list[dict[str, Any]] = []
        self.failures = failures
        self.lock = threading.Lock()

    def app(self) -> Flask:
        app = Flask("recorder")

        @app.post("/progress")
        def progress() -> tuple[str, int]:
            with self.lock:
                if self.failures > 0:
                    self.failures -= 1
                    return "busy", 503
                self.posts.append(request.get_json())
            return "", 204

        return app


@pytest.fixture(scope="module")
def recorder() -> Iterator[tuple[Recorder, str]]:
    recording = Recorder()
    with serve(recording.app()) as url:
        yield recording, url


@pytest.fixture(scope="module")
def world(
    solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory, recorder: tuple[Recorder, str]
) -> Settings:
    folder = tmp_path_factory.mktemp("jobs")
    memo = {"id": "file://share/board/memo.txt", "title": "Memo", "exactContent": "The board memo."}
    mine = board_world(solr, settings, folder, "jobs", memo, sample=False)
    users = {"bea": ["board"], "otto": [], "indexer": ["ops"]}
    # the control's user, who holds every token (the writers' own ones too)
    users[EVERY_TOKEN] = ["board", "ops", own_token("indexer"), own_token("otto"), own_token("root")]
    (folder / "mapping.json").write_text(json.dumps({"users": users}))
    bootstrap(solr, mine)  # Solr's layer reads the same mapping
    mine = mine.replace(
        store_url=f"sqlite:///{folder / 'store.db'}",
        update_users="indexer,otto",
        callback_allowed_hosts=recorder[1].removeprefix("http://"),
        callback_retries=2,
        admins="root",
        retrieval_method="bm25",
    )
    StoreHandle(mine).users().create("root", PASSWORD, admin=True)  # an administrator, signed in by the proxy here
    return mine


@pytest.fixture
def client(world: Settings, fake_llm_server: tuple[FakeLlm, str]) -> FlaskClient:
    return create_app(world.replace(llm_endpoint=fake_llm_server[1])).test_client()


def events(client: FlaskClient, job_id: str, headers: dict[str, str] = WRITER) -> list[tuple[str, dict[str, Any]]]:
    """The job's event stream, read to its end."""
    response = client.get(f"{API}/index/jobs/{job_id}/events", headers=headers, buffered=False)
    assert response.mimetype == "text/event-stream"
    found = []
    for block in response.get_data(as_text=True).split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if "event" in lines:
            found.append((lines["event"], json.loads(lines["data"])))
    return found


def jobs_in_store(world: Settings) -> int:
    with open_engine(world.store_url).connect() as connection:
        return connection.execute(text("SELECT count(*) FROM index_job")).scalar_one()


def docs(prefix: str, n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"{prefix}-{i}", "title": f"Note {i}", "exactContent": f"Pump {i} of {prefix} needs oil."}
        for i in range(n)
    ]


def test_a_json_job_streams_its_progress_to_the_end(client: FlaskClient, solr: SolrClient, world: Settings) -> None:
    batch = [*docs("json", 40), {"id": "json-bad"}]  # no text: its own error, the others go on
    created = client.post(f"{API}/index/jobs", json={"documents": batch}, headers=WRITER)
    assert created.status_code == 202, created.get_json()
    job = created.get_json()["content"]["job"]
    assert job["status"] == "running" and job["total"] == 41
    seen = events(client, job["id"])
    assert [name for name, _ in seen][-1] == "done" and all(name == "progress" for name, _ in seen[:-1])
    final = seen[-1][1]
    assert final["status"] == "done" and final["percent"] == 100.0 and final["documents"] == 41
    assert final["failed"] == 1 and final["errors"][0].startswith("json-bad:")
    percents = [state["percent"] for _, state in seen]
    assert percents == sorted(percents)
    assert client.get(f"{API}/index/jobs/{job['id']}", headers=WRITER).get_json()["content"]["job"] == final
    found = solr.get(f"{world.collection_main}/internal", {"q": "id:json-*", "rows": 0})
    assert found["response"]["numFound"] == 40
    assert chunks_of(solr, world, "json-7")[0]["has_vector"] is True


def test_uploaded_files_carry_their_acl_and_only_their_readers_find_them(
    client: FlaskClient, world: Settings, fake_llm: FakeLlm
) -> None:
    files = [
        (io.BytesIO(b"The board salary grid for next year."), "grid.txt"),
        (io.BytesIO(b"# Boiler\n\nThe boiler room is checked weekly."), "boiler.md"),
    ]
    form = {"files": files, "fields": json.dumps({"allow_token_document": ["board"]})}
    created = client.post(f"{API}/index/jobs", data=form, headers=WRITER, content_type="multipart/form-data")
    assert created.status_code == 202, created.get_json()
    job = created.get_json()["content"]["job"]
    assert events(client, job["id"])[-1][1]["documents"] == 2
    for user, sees in (("bea", True), ("otto", False)):
        answer = client.post(f"{API}/ai/rag", json={"query": "board salary grid"}, headers={"X-Remote-User": user})
        urls = [d["url"] for d in answer.get_json()["content"].get("documents", [])]
        assert ("upload://grid.txt" in urls) is sees, (user, answer.get_json())


def test_progress_is_posted_to_an_allowed_callback_retried_and_bounded(
    client: FlaskClient, recorder: tuple[Recorder, str]
) -> None:
    recording, url = recorder
    recording.posts.clear()
    recording.failures = 2  # the first post is tried three times: two refusals, then accepted
    body = {"documents": docs("cb", 5), "callback": f"{url}/progress"}
    job = client.post(f"{API}/index/jobs", json=body, headers=WRITER).get_json()["content"]["job"]
    events(client, job["id"])
    for _ in range(50):
        if recording.posts and recording.posts[-1]["job"]["status"] == "done":
            break
        threading.Event().wait(0.1)
    assert recording.posts[-1]["job"]["status"] == "done" and recording.posts[-1]["job"]["documents"] == 5
    assert all(post["job"]["id"] == job["id"] for post in recording.posts)
    # a caller that never answers well costs the job 1 + retries tries per post, then it goes on
    recording.failures = 1000
    job = client.post(f"{API}/index/jobs", json=body, headers=WRITER).get_json()["content"]["job"]
    assert events(client, job["id"])[-1][1]["status"] == "done"
    for _ in range(100):  # the end is recorded, then posted: its tries come after
        if 1000 - recording.failures >= 3 * 2:
            break
        threading.Event().wait(0.1)
    threading.Event().wait(1.0)  # no further try comes
    assert 1000 - recording.failures == 3 * 2  # two posts (a batch, the end), three tries each
    recording.failures = 0


def test_a_workflow_s_chunker_cuts_the_job_s_documents(
    client: FlaskClient, solr: SolrClient, world: Settings, fake_llm: FakeLlm
) -> None:
    statements = ["The cooling pump is checked every Monday.", "The filter is replaced every six months."]
    fake_llm.answer = lambda prompt: json.dumps({"propositions": statements})
    root = {"X-Remote-User": "root"}
    spec = {"name": "propositions", "chunker": {"kind": "proposition", "maxChunkSize": 60}}
    workflow = client.post(f"{API}/workflows", json=spec, headers=root).get_json()["content"]["workflow"]
    text_ = "The cooling pump is checked on Mondays and its filter every six months."
    body = {"documents": [{"id": "wf-doc", "exactContent": text_}], "workflow": workflow["id"]}
    job = client.post(f"{API}/index/jobs", json=body, headers=WRITER).get_json()["content"]["job"]
    assert events(client, job["id"])[-1][1]["status"] == "done"
    solr.get(f"{world.collection_vector}/update", {"commit": "true"})
    assert [c["exactContent"] for c in chunks_of(solr, world, "wf-doc")] == statements


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"documents": []}, "'documents'"),
        ({"documents": "x"}, "'documents'"),
        ({"documents": docs("z", 1), "colour": 1}, "colour"),
        ({"documents": docs("z", 1), "callback": "http://elsewhere.example/p"}, "allowedHosts"),
        ({"documents": docs("z", 1), "callback": "ftp://127.0.0.1/p"}, "http(s)"),
        ({"documents": docs("z", 1), "workflow": 3}, "'workflow'"),
        ({"documents": docs("z", 6)}, "at most 5"),
    ],
)
def test_bad_jobs_are_refused_and_nothing_starts(client: FlaskClient, world: Settings, body: Any, says: str) -> None:
    before = jobs_in_store(world)
    client = create_app(client.application.extensions["live"].base.replace(jobs_max_documents=5)).test_client()
    response = client.post(f"{API}/index/jobs", json=body, headers=WRITER)
    error = response.get_json()["content"]["error"]
    assert response.status_code == 400 and error["label"] == "jobBadRequest" and says in error["reason"], error
    assert jobs_in_store(world) == before


def test_bad_uploads_are_refused(client: FlaskClient, world: Settings) -> None:
    before = jobs_in_store(world)
    folders = set(Path(tempfile.gettempdir()).glob("index-job-*"))
    cases = [
        {"files": [(io.BytesIO(b"a"), "a.txt")], "callback": "http://elsewhere.example/p"},  # checked before saving
        {"files": [(io.BytesIO(b"x"), "run.exe")]},
        {"files": [(io.BytesIO(b"a"), "a.txt"), (io.BytesIO(b"b"), "a.txt")]},
        {"files": [(io.BytesIO(b"a"), "a.txt")], "fields": "{not json"},
        {"files": [(io.BytesIO(b"a"), "a.txt")], "fields": json.dumps({"id": "x"})},
        {"fields": "{}"},
    ]
    for form in cases:
        response = client.post(f"{API}/index/jobs", data=form, headers=WRITER, content_type="multipart/form-data")
        assert response.status_code == 400 and response.get_json()["content"]["error"]["label"] == "jobBadRequest"
    assert jobs_in_store(world) == before
    assert set(Path(tempfile.gettempdir()).glob("index-job-*")) == folders  # no file was kept


def test_random_users_see_only_their_own_jobs(client: FlaskClient) -> None:
    """Jobs of the writers (indexer, otto) read by random users, anonymous included: a job is
    found by its writer and by an administrator only; others, not administrators, may not write."""
    owners = {}
    for writer in ("indexer", "otto"):
        body = {"documents": docs(f"own-{writer}", 2)}
        job = client.post(f"{API}/index/jobs", json=body, headers={"X-Remote-User": writer}).get_json()
        owners[job["content"]["job"]["id"]] = writer
        events(client, job["content"]["job"]["id"], {"X-Remote-User": writer})
    rng = random.Random(23)
    for _ in range(40):
        who = rng.choice(["indexer", "otto", "bea", "root", None])
        headers = {"X-Remote-User": who} if who else {}
        job_id = rng.choice(list(owners))
        path = rng.choice(["", "/events"])
        response = client.get(f"{API}/index/jobs/{job_id}{path}", headers=headers)
        body = response.get_data(as_text=True)  # read whole: a finished job's stream ends at once
        if who in (owners[job_id], "root"):
            assert response.status_code == 200 and job_id in body, (who, job_id)
        else:
            assert response.status_code == 404 and job_id not in body, (who, job_id)
        if who in ("bea", None):
            refused = client.post(f"{API}/index/jobs", json={"documents": docs("no", 1)}, headers=headers)
            assert refused.status_code in (401, 403)


def test_the_index_command_cuts_with_a_workflow_s_chunker(
    client: FlaskClient,
    solr: SolrClient,
    world: Settings,
    fake_llm: FakeLlm,
    fake_llm_server: tuple[FakeLlm, str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    statements = ["The boiler is serviced each spring.", "The boiler's valves are tested monthly."]
    fake_llm.answer = lambda prompt: json.dumps({"propositions": statements})
    spec = {"name": "cli propositions", "chunker": {"kind": "proposition", "maxChunkSize": 60}}
    client.post(f"{API}/workflows", json=spec, headers={"X-Remote-User": "root"})
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "boiler.txt").write_text("The boiler is serviced in spring and its valves monthly.")
    cli_environment(
        monkeypatch,
        tmp_path / "var",
        world,
        SOLR_COLLECTION_MAIN=world.collection_main,
        SOLR_COLLECTION_VECTOR=world.collection_vector,
        SOLR_EMBEDDINGS_ENDPOINT=world.agent_url,
        STORE_URL=world.store_url,
        AI_API_ENDPOINT=fake_llm_server[1],
    )
    command = ["index", "--workflow", "cli propositions", "--visibility", "public", str(tmp_path / "docs")]
    result = CliRunner().invoke(cli, command)
    assert "indexed 1 documents (2 chunks" in result.output and "chunks=2" in result.output, result.output
    parent = (tmp_path / "docs" / "boiler.txt").resolve().as_uri()
    solr.get(f"{world.collection_vector}/update", {"commit": "true"})
    assert [c["exactContent"] for c in chunks_of(solr, world, parent)] == statements
    unknown = CliRunner().invoke(cli, ["index", "--workflow", "nope", "--visibility", "public", str(tmp_path / "docs")])
    assert unknown.exit_code != 0 and "no workflow has the id or name 'nope'" in unknown.output


@pytest.mark.parametrize("protected", [True, False], ids=["as-chosen", "control-both-layers-off"])
def test_uploads_are_private_to_their_writer_unless_the_writer_says_otherwise(
    client: FlaskClient, protected: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writers upload files with a random visibility — none sent (private), private, a group they
    hold (indexer: ops), public — and random readers search: a private file reaches its writer
    only, a group's file its holders, a public one everyone; a group the writer does not hold and
    an unknown visibility are refused before anything is saved. Control: with the sidecar's
    filter and Solr's both off, readers find files not theirs (the check is not blind)."""
    rng = random.Random(20261127 + protected)
    expected: dict[str, set[str | None]] = {}  # file -> who may read it
    readers: list[str | None] = ["indexer", "otto", "bea", "root", None]
    choices = [None, "private", "public", "group:ops"]
    for n in range(8):
        writer = rng.choice(["indexer", "otto"])
        choice = choices[n % 4] if n < 4 else rng.choice(choices)
        if choice == "group:ops":
            writer = "indexer"  # the writer who holds ops
        name = f"kite{rng.getrandbits(32):08x}.txt"
        form: dict[str, Any] = {"files": [(io.BytesIO(b"The kite report of the flying club."), name)]}
        if choice:
            form["visibility"] = choice
        who = {"X-Remote-User": writer}
        created = client.post(f"{API}/index/jobs", data=form, headers=who, content_type="multipart/form-data")
        assert created.status_code == 202, created.get_json()
        assert events(client, created.get_json()["content"]["job"]["id"], who)[-1][1]["documents"] == 1
        expected[f"upload://{name}"] = (
            set(readers) if choice == "public" else {"indexer"} if choice == "group:ops" else {writer}
        )
    for bad, why in (("group:ops", "token you hold"), ("sideways", "private, public")):
        refused = client.post(
            f"{API}/index/jobs",
            data={"files": [(io.BytesIO(b"x"), "refused.txt")], "visibility": bad},
            headers={"X-Remote-User": "otto"},
            content_type="multipart/form-data",
        )
        assert refused.status_code == 400 and why in refused.get_json()["content"]["error"]["reason"]
    if not protected:
        monkeypatch.setattr("datafari_rag.solr.search.acl_params", layers_off("both"))
    leaks, missed = [], []
    for reader in readers:
        headers = {"X-Remote-User": reader} if reader else {}
        found = client.get(
            f"{API}/search/select", query_string={"q": "kite report", "rows": 100, "fl": "id"}, headers=headers
        ).get_json()["response"]["docs"]
        seen = {d["id"] for d in found} & set(expected)
        leaks += [(reader, doc) for doc in seen if reader not in expected[doc]]
        missed += [(reader, doc) for doc, allowed in expected.items() if reader in allowed and doc not in seen]
    if not protected:
        assert leaks, "the control found nothing: the check is blind"
        return
    assert leaks == [] and missed == [], (leaks, missed)
    assert any(len(v) == 1 for v in expected.values()) and any(None in v for v in expected.values())
