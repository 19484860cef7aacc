"""Helpers that run the project's real servers inside the test process, on free ports."""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import urllib3
from flask import Flask
from werkzeug.serving import make_server

from ..config import Settings, env_name


def wait_for_http(url: str, timeout: float = 60.0) -> None:
    """Returns once ``url`` answers (any status), or raises after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib3.request("GET", url, timeout=2, retries=False)
            return
        except urllib3.exceptions.HTTPError:
            time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f}s")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serve(app: Flask, port: int | None = None) -> Iterator[str]:
    """Serves ``app`` on 127.0.0.1 in a thread; yields its base URL, stops on exit."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = make_server("127.0.0.1", port or free_port(), app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


def settings_env(settings: Settings) -> dict[str, str]:
    """The settings as DATAFARI_RAG_* variables, for a sidecar started as its own process."""
    env = dict(os.environ)
    for f in dataclasses.fields(Settings):
        value = getattr(settings, f.name)
        env[env_name(f.metadata["key"])] = str(value).lower() if isinstance(value, bool) else str(value)
    return env


@contextmanager
def served_process(
    args: list[str], ready_url: str, env: dict[str, str] | None = None, log: Path | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m <args>`` in a process of its own, once ``ready_url`` answers; stopped on exit.
    Its stderr goes to ``log`` when given, nowhere otherwise."""
    with open(log or os.devnull, "wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", *args], env=env or dict(os.environ), stdout=subprocess.DEVNULL, stderr=stderr
        )
        try:
            wait_for_http(ready_url)
            yield process
        finally:
            process.terminate()
            process.wait(timeout=30)


@contextmanager
def served_sidecar(settings: Settings, port: int, log: Path | None = None) -> Iterator[str]:
    """The sidecar as production runs it (gunicorn, conf/gunicorn.conf.py) on ``port``; its
    stderr (the log) into ``log`` when given."""
    base = f"http://127.0.0.1:{port}"
    with served_process(
        ["datafari_rag.cli", "serve"], f"{base}/health", settings_env(settings.replace(server_port=port)), log
    ):
        yield base


@contextmanager
def stub_llm_process(port: int, delay: float) -> Iterator[str]:
    """The recording LLM stub in a process of its own (so that it does not share the GIL with the
    caller's threads); yields its OpenAI base URL."""
    url = f"http://127.0.0.1:{port}/v1"
    with served_process(["datafari_rag.testing.fake_llm", "--port", str(port), "--delay", str(delay)], f"{url}/models"):
        yield url
