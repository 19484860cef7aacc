"""ZooKeeper of the local runtime, in processes of its own (Maven Central's ZooKeeper jars, those
Solr depends on): one server beside a single node, or an ensemble of three for a cluster, so that
losing any one process — a Solr node or a ZooKeeper server — loses neither the cluster state nor
the quorum that elects shard leaders.

Ports (all on 127.0.0.1): server ``i`` of an ensemble on Solr's port ``p`` listens to clients on
``p + 1000 + i``, to its peers on ``p + 2000 + i`` and for leader election on ``p + 3000 + i``; a
single node's server on ``p + 1000``, as Solr's embedded ZooKeeper did.
"""

from __future__ import annotations

import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..paths import SOLR_RUNTIME, var_dir
from .process import LIB, PidFile, RuntimeProblem, java_version

HEAP = "256m"
CLIENT, QUORUM, ELECTION = 1000, 2000, 3000


class ZooKeeperProblem(RuntimeProblem):
    """A ZooKeeper server did not start or serve; the message has its log."""


@dataclass(frozen=True)
class Peer:
    """One server of an ensemble as every member's zoo.cfg names it."""

    myid: int
    quorum_port: int
    election_port: int

    def line(self) -> str:
        return f"server.{self.myid}=127.0.0.1:{self.quorum_port}:{self.election_port}"


@dataclass
class LocalZooKeeper:
    """One ZooKeeper server: its client port, its home (zoo.cfg, pid file, logs) and data folder;
    with ``peers`` a member (``myid``) of that ensemble, without a standalone server."""

    client_port: int
    home: Path
    data_dir: Path | None = None
    myid: int = 0
    peers: tuple[Peer, ...] = ()
    # data of an earlier layout this server takes over at its first start (see ensemble())
    adopt: Path | None = None
    pid_file: PidFile = field(init=False)
    process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)  # started by us

    def __post_init__(self) -> None:
        self.data_dir = Path(self.data_dir or self.home / "data")
        self.pid_file = PidFile(self.home / "zookeeper.pid")
        self.log_dir = self.home / "logs" / "zookeeper"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.client_port}"

    def pid(self) -> int | None:
        running = self.pid_file.read()
        return running[0] if running else None

    def config(self) -> str:
        """zoo.cfg: the runtime's common settings, then this server's own."""
        lines = [
            (SOLR_RUNTIME / "zoo.cfg").read_text().rstrip(),
            f"dataDir={self.data_dir}",
            f"clientPort={self.client_port}",
            *(peer.line() for peer in self.peers),
        ]
        return "\n".join(lines) + "\n"

    def start(self, timeout: float = 60.0, wait: bool = True) -> float:
        """Starts the server (if not running); with ``wait``, until it serves (a member of an
        ensemble serves once a quorum of its peers has elected a leader). Returns seconds taken."""
        began = time.monotonic()
        if self.pid() is None:
            java_version()
            assert self.data_dir is not None
            if self.adopt is not None and self.adopt.is_dir() and not self.data_dir.exists():
                self.data_dir.parent.mkdir(parents=True, exist_ok=True)
                self.adopt.rename(self.data_dir)
            self.data_dir.mkdir(parents=True, exist_ok=True)
            if self.peers:
                (self.data_dir / "myid").write_text(f"{self.myid}\n")
            config = self.home / "zoo.cfg"
            config.write_text(self.config())
            command = [
                "java",
                f"-Xmx{HEAP}",
                f"-XX:ErrorFile={self.log_dir / 'hs_err_pid%p.log'}",
                f"-Dsolr.log.dir={self.log_dir}",
                f"-Dlog4j.configurationFile={SOLR_RUNTIME / 'log4j2.xml'}",
                "-cp",
                f"{LIB}/*",
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                str(config),
            ]
            self.process = self.pid_file.spawn(command, self.log_dir / "console.log", self.client_port)
        if wait:
            self.wait(timeout - (time.monotonic() - began))
        return time.monotonic() - began

    def wait(self, timeout: float) -> None:
        """Until the server serves clients, or a clear error with its log."""
        deadline = time.monotonic() + max(timeout, 1.0)
        while time.monotonic() < deadline:
            if self.mode():
                return
            if self.process is not None and self.process.poll() is not None:
                self.pid_file.path.unlink(missing_ok=True)
                raise ZooKeeperProblem(f"ZooKeeper exited with code {self.process.returncode}:\n{self.log_tail()}")
            time.sleep(0.2)
        raise ZooKeeperProblem(f"ZooKeeper on {self.address} did not serve within {timeout:.0f}s:\n{self.log_tail()}")

    def mode(self) -> str | None:
        """standalone, leader or follower while the server serves; None otherwise (not running,
        or a member without a quorum)."""
        try:
            with socket.create_connection(("127.0.0.1", self.client_port), timeout=2) as conn:
                conn.sendall(b"srvr")
                reply = b""
                while chunk := conn.recv(4096):
                    reply += chunk
        except OSError:
            return None
        for line in reply.decode(errors="replace").splitlines():
            if line.startswith("Mode:"):
                return line.split(":", 1)[1].strip()
        return None

    def stop(self, timeout: float = 30.0) -> bool:
        return self.pid_file.stop(timeout)

    def status(self) -> dict[str, object]:
        return {"zookeeper": self.address, "pid": self.pid(), "mode": self.mode()}

    def log_tail(self, lines: int = 30) -> str:
        text = ""
        for file in (self.log_dir / "console.log", self.log_dir / "solr.log"):
            if file.exists():
                text += "\n".join(file.read_text(errors="replace").splitlines()[-lines:]) + "\n"
        return text


def ensemble(port: int, size: int, root: Path | None = None) -> list[LocalZooKeeper]:
    """The ``size`` servers of a local ensemble for the Solr nodes on ``port``, homes
    ``var/zookeeper<i>``. A cluster started when ZooKeeper ran inside its first node keeps its
    state: that data becomes the first server's."""
    root = root or var_dir()
    peers = tuple(Peer(i, port + QUORUM + i - 1, port + ELECTION + i - 1) for i in range(1, size + 1))
    servers = [
        LocalZooKeeper(
            client_port=port + CLIENT + i - 1,
            home=root / f"zookeeper{i}",
            myid=i,
            peers=peers if size > 1 else (),
            adopt=root / "solr" / "zoo_data" if i == 1 else None,
        )
        for i in range(1, size + 1)
    ]
    return servers


def connect_string(servers: list[LocalZooKeeper]) -> str:
    """Solr's zkHost for these servers."""
    return ",".join(server.address for server in servers)
