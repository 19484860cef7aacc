"""`datafari-rag run` (what `make run` starts) on a machine where nothing is configured, as a
newcomer meets it: Solr comes up secured (anonymous clients get 401 on /internal, /get and the
admin APIs; the sidecar reads through the generated service account, whose password is never
printed); the banner prints the web UI's address, a first administrator's password and the demo
users', and the same question answered differently for alice (HR manager) and bob (staff); in the
browser that administrator signs in with the printed password, indexes a file and gets an answer
citing it — no file edited, no second start. Ctrl-C stops everything."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import urllib3
from playwright.sync_api import Browser, expect

from datafari_rag.testing.servers import free_port
from tests.integration.test_secure_default import SERVICE_ONLY, _status
from tests.ui.conftest import shot

pytestmark = pytest.mark.skipif(bool(os.environ.get("DATAFARI_RAG_SOLR_URL")), reason="needs the local runtime")

ADMIN = re.compile(r"administrator: (\S+) / (\S+)")
DEMO = re.compile(r"demo users: alice, bob, carol / (\S+)")
AS_USER = re.compile(r"^  as (\w+): (.*)$", re.M)
SOURCES = re.compile(r"^  as (\w+): .*\n    sources: (.*)$", re.M)


def _status_or_down(url: str) -> str:
    try:
        return str(urllib3.request("GET", f"{url}/admin/info/system", retries=False, timeout=5).status)
    except urllib3.exceptions.HTTPError:
        return "down"


def test_run_from_nothing_gives_a_secured_solr_a_working_ui_and_shows_the_point(
    tmp_path: Path, browser: Browser
) -> None:
    ports = {"SOLR": free_port(), "AGENT_PORT": free_port(), "SERVER_PORT": free_port()}
    solr_url = f"http://127.0.0.1:{ports['SOLR']}/solr"
    var = tmp_path / "var"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DATAFARI_RAG_")},
        "DATAFARI_RAG_VAR": str(var),
        "DATAFARI_RAG_SOLR_URL": solr_url,
        "DATAFARI_RAG_AGENT_PORT": str(ports["AGENT_PORT"]),
        "DATAFARI_RAG_SERVER_PORT": str(ports["SERVER_PORT"]),
    }
    run = subprocess.Popen(
        [sys.executable, "-m", "datafari_rag.cli", "run"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    output: list[str] = []
    try:
        deadline = time.monotonic() + 600
        while not any("Ctrl-C stops everything" in line for line in output):
            line = run.stdout.readline()  # type: ignore[union-attr]
            assert line and time.monotonic() < deadline, "".join(output[-40:])
            output.append(line)
        banner = "".join(output)
        # Solr's door: secured from the start, the service account's password never printed
        password = (var / "secrets" / "solr-service.password").read_text().strip()
        assert password not in banner and "WARNING" not in banner
        assert "Solr's door: Solr 9.10.1, BasicAuthPlugin" in banner
        refused = {f"{m} {p}": _status(solr_url, m, p, q) for m, p, q in SERVICE_ONLY}
        assert set(refused.values()) == {401}, refused
        # local sign-in set up without a file edited: a kept signing secret, owner-only
        secret = var / "secrets" / "jwt-hs256.secret"
        assert secret.stat().st_mode & 0o777 == 0o600 and secret.read_text().strip() not in banner
        admin = ADMIN.search(banner)
        assert admin and DEMO.search(banner), banner[-3000:]
        # shown before the sidecar is waited for: a start that fails then does not lose them
        assert admin.start() < banner.index("Sidecar health"), banner[-3000:]
        # the point: one question, two users, two answers from what each may read
        answers = dict(AS_USER.findall(banner))
        assert set(answers) == {"alice", "bob"}, banner[-3000:]
        assert "4 percent" in answers["alice"] and "percent" not in answers["bob"], answers
        cited = dict(SOURCES.findall(banner))  # what each answer cites, by title
        assert cited == {"alice": "Salary review 2026 (HR managers)", "bob": "none"}, cited
        base = f"http://127.0.0.1:{ports['SERVER_PORT']}"
        assert f"Web UI: {base}/ui/" in banner

        context = browser.new_context(viewport={"width": 1280, "height": 900})
        anonymous = f"{base}/Datafari/rest/v2.0/search/select"
        page = context.new_page()
        page.set_default_timeout(60000)
        try:
            page.goto(f"{base}/ui/")
            page.get_by_label("Username").fill(admin.group(1))
            page.get_by_label("Password").fill(admin.group(2))
            page.get_by_role("button", name="Sign in").click()
            page.get_by_role("link", name="Indexing").click()
            page.get_by_label("Files (txt, md, html, pdf, docx, jsonl)").set_input_files(
                [{"name": "kiln.txt", "mimeType": "text/plain", "buffer": b"The pottery kiln is fired every Thursday."}]
            )
            expect(page.get_by_label("Who may read these files")).to_have_value("private")  # never public by accident
            page.get_by_role("button", name="Index").click()
            expect(page.get_by_role("status").filter(has_text="Indexing finished.")).to_be_visible()
            page.get_by_role("link", name="Chat").click()
            page.get_by_label("Your question").fill("When is the pottery kiln fired?")
            page.get_by_role("button", name="Send").click()
            sources = page.get_by_role("region", name="Sources").last
            expect(sources.get_by_role("link").first).to_contain_text("kiln")
            sources.get_by_role("link").first.click()  # the cited file opens, its passage marked
            expect(page.get_by_role("dialog").locator("mark")).to_contain_text("kiln is fired every Thursday")
            page.get_by_role("dialog").get_by_role("button", name="Close").click()
            page.get_by_role("button", name="Good answer").last.click()
            expect(page.get_by_role("status").filter(has_text="Thank you")).to_be_visible()
            shot(page, "20-first-run-answer")
            found = urllib3.request("GET", anonymous, fields={"q": "kiln"}, timeout=30).json()
            assert found["response"]["numFound"] == 0  # the upload is its writer's only
        finally:
            context.close()
    finally:
        os.killpg(run.pid, signal.SIGINT)  # Ctrl-C in the terminal
        rest, _ = run.communicate(timeout=150)  # every process holding its output ended: nothing left behind
    assert run.returncode in (0, 1), rest[-2000:]
    assert _status_or_down(solr_url) == "down"  # Ctrl-C stopped the Solr it started
