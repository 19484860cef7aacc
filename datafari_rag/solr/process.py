"""A background JVM of the local runtime (a Solr node, a ZooKeeper server) known by its pid file:
started detached from the terminal, found again by a later command, stopped gently then firmly."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from ..paths import SOLR_RUNTIME

MIN_JAVA = 17
LIB = SOLR_RUNTIME / "lib"


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


class PidFile:
    """The pid (and port) of one background process, in a JSON file of its home folder."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> tuple[int, int | None] | None:
        """(pid, port) of the process if it still runs, else None (a stale file is removed)."""
        try:
            record = json.loads(self.path.read_text())
            pid = int(record["pid"])
            reap(pid)  # a child of ours that died is a zombie until collected: it answers kill(0)
            os.kill(pid, 0)
        except (OSError, ValueError, KeyError, TypeError):
            self.path.unlink(missing_ok=True)
            return None
        port = record.get("port")
        return pid, int(port) if port is not None else None

    def spawn(self, command: list[str], log: Path, port: int) -> subprocess.Popen[bytes]:
        """Starts ``command`` in its own session (a terminal's Ctrl-C does not reach it), its
        output appended to ``log``, and records it."""
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as console:
            process = subprocess.Popen(
                command, stdout=console, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        self.path.write_text(json.dumps({"pid": process.pid, "port": port}))
        return process

    def stop(self, timeout: float = 30.0) -> bool:
        """SIGTERM, then SIGKILL after ``timeout``; returns False if nothing was running."""
        running = self.read()
        if running is None:
            return False
        pid = running[0]
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except OSError:
                break
            reap(pid)
            time.sleep(0.2)
        else:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            reap(pid)
        self.path.unlink(missing_ok=True)
        return True


def reap(pid: int) -> None:
    """Collects the exit status of a child we started (no zombie keeps the pid alive)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
