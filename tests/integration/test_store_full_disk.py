"""The store on a file system that fills up, as a real disk does (a tmpfs of a few megabytes
under the SQLite file): readiness says the store is down while it cannot write, stored
conversations can still be read, every write is refused with Datafari's error JSON and nothing
already stored is lost; once space is freed the same process is ready and writes again, with no
restart."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr.bootstrap import BootstrapReport
from tests.integration.conftest import trusted_users

CONV = "/Datafari/rest/v2.0/conversations"
ALICE = {"X-Remote-User": "alice"}


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A file system of its own, 4 MB, unmounted whatever the test did."""
    if os.geteuid() != 0:
        pytest.skip("mounting a file system of the test's own needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], check=True)
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path) -> Path:
    """Writes a file until the file system refuses a byte more."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 65536)
        except OSError:
            pass
    try:
        with open(filler, "ab", buffering=0) as out:
            while True:
                out.write(b"\0")
    except OSError:
        pass
    assert os.statvfs(disk).f_bavail == 0
    return filler


def ready(client: FlaskClient, wanted: Callable[[int, dict[str, Any]], bool], seconds: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        response = client.get("/health/ready")
        body = response.get_json()
        if wanted(response.status_code, body):
            return body
        assert time.monotonic() < deadline, f"not reached within {seconds}s: {response.status_code} {body}"
        time.sleep(0.05)


def test_a_full_disk_makes_the_store_unready_keeps_what_it_holds_and_recovers_without_restart(
    settings: Settings, bootstrapped: BootstrapReport, small_disk: Path, tmp_path: Path
) -> None:
    mine = trusted_users(settings, tmp_path, {"alice": []}).replace(
        store_url=f"sqlite:///{small_disk / 'store.db'}", health_interval=0.2, health_failures=2
    )
    client = create_app(mine).test_client()
    ready(client, lambda status, body: status == 200 and body["store"]["status"] == "UP")
    kept = client.post(CONV, json={"title": "Kept through a full disk"}, headers=ALICE)
    assert kept.status_code == 201, kept.get_json()
    kept_id = kept.get_json()["content"]["conversation"]["id"]

    filler = fill(small_disk)
    down = ready(client, lambda status, body: status == 503)
    assert down["store"]["status"] == "DOWN" and "full" in down["store"]["error"], down["store"]
    refused = client.post(CONV, json={"title": "Written on a full disk"}, headers=ALICE)
    assert refused.status_code == 503, refused.data[:300]
    error = refused.get_json()
    assert error["status"] == "ERROR" and error["content"]["error"]["label"] == "conversationStoreUnavailable"
    assert error["content"]["message"], error
    shown = client.get(f"{CONV}/{kept_id}", headers=ALICE)  # reading needs no space
    assert shown.status_code == 200, shown.get_json()
    assert shown.get_json()["content"]["conversation"]["title"] == "Kept through a full disk"
    assert ready(client, lambda status, body: True)["store"]["status"] == "DOWN"  # still, while full

    filler.unlink()
    back = ready(client, lambda status, body: status == 200)  # the same process: no restart
    assert back["store"]["status"] == "UP", back["store"]
    written = client.post(CONV, json={"title": "Written after space was freed"}, headers=ALICE)
    assert written.status_code == 201, written.get_json()
    for n in range(40):  # and goes on writing: what the failed writes left does not take the space back
        more = client.post(CONV, json={"title": f"More {n}", "instructions": "x" * 4000}, headers=ALICE)
        assert more.status_code == 201, (n, more.get_json())
        gone = client.delete(f"{CONV}/{more.get_json()['content']['conversation']['id']}", headers=ALICE)
        assert gone.status_code == 200, (n, gone.get_json())
    listed = client.get(CONV, headers=ALICE).get_json()["content"]["conversations"]
    assert [c["title"] for c in listed] == ["Written after space was freed", "Kept through a full disk"]
    assert ready(client, lambda status, body: True)["store"]["status"] == "UP"
