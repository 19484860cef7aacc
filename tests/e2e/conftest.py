"""``make e2e``: France Labs' DatafariUI, built from its public repository, driven in Debian's
chromium against the sidecar and the real Solr. Not part of ``make test`` (it needs the UI's
sources and a browser, and takes minutes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from datafari_rag.paths import var_dir

HERE = Path(__file__).parent
# a git directory (a bare clone) or a checked-out folder of francelabs/DatafariUI; no default
SOURCE = Path(os.environ["DATAFARIUI_SRC"]) if os.environ.get("DATAFARIUI_SRC") else None
CHROMIUM = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
# collected by `make e2e` only (DATAFARI_RAG_E2E=1): `make test` needs neither DatafariUI nor the
# ten minutes every benchmark's quick run takes
collect_ignore = [] if os.environ.get("DATAFARI_RAG_E2E") else ["test_datafariui.py", "test_bench_smoke.py"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.e2e)


def _run(args: list[str], cwd: Path, **env: str) -> None:
    done = subprocess.run(args, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def _export(source: Path, target: Path) -> str:
    """DatafariUI's files at ``source``'s HEAD into ``target``; returns the commit."""
    if (source / "HEAD").is_file():  # a bare git directory
        commit = subprocess.check_output(["git", "--git-dir", str(source), "rev-parse", "HEAD"], text=True).strip()
        archive = subprocess.run(["git", "--git-dir", str(source), "archive", "HEAD"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
        return commit
    shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("node_modules", "build"))
    return "folder"


def _drop_unused_dependency(folder: Path) -> None:
    """``lucene`` is fetched from GitHub and imported nowhere in ``src``: out of package.json and
    the lock, so that npm needs the registry only."""
    package = json.loads((folder / "package.json").read_text())
    package["dependencies"].pop("lucene", None)
    (folder / "package.json").write_text(json.dumps(package, indent=2))
    lock = json.loads((folder / "package-lock.json").read_text())
    lock.get("dependencies", {}).pop("lucene", None)
    for key in [k for k in lock.get("packages", {}) if k.endswith("node_modules/lucene")]:
        lock["packages"].pop(key)
    lock.get("packages", {}).get("", {}).get("dependencies", {}).pop("lucene", None)
    (folder / "package-lock.json").write_text(json.dumps(lock, indent=2))


@pytest.fixture(scope="session")
def datafariui_build() -> Path:
    """DatafariUI's production build (PUBLIC_URL /datafariui), built once per source commit."""
    if SOURCE is None or not SOURCE.exists():
        pytest.fail(
            "make e2e builds DatafariUI from its sources: set DATAFARIUI_SRC to a clone of "
            f"https://github.com/francelabs/DatafariUI (a git directory or a folder; now: {SOURCE})"
        )
    folder = var_dir() / "e2e" / "DatafariUI"
    stamp = folder / ".built-from"
    if folder.exists() and stamp.exists() and (folder / "build" / "index.html").exists():
        return folder / "build"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    commit = _export(SOURCE, folder)
    _drop_unused_dependency(folder)
    _run(["npm", "ci", "--no-audit", "--no-fund", "--legacy-peer-deps"], folder)
    # react-scripts 3's webpack 4 needs Node's legacy OpenSSL provider on Node 17+
    _run(["npm", "run", "build"], folder, NODE_OPTIONS="--openssl-legacy-provider", CI="false")
    stamp.write_text(commit)
    return folder / "build"
