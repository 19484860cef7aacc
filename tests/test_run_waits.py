"""``datafari-rag run`` waits for the services it starts as long as they live, saying so, instead
of giving up after a fixed time on a busy machine; a service that exits fails the start at once."""

from __future__ import annotations

import click
import pytest

from datafari_rag.cli import _wait_http
from datafari_rag.testing.servers import free_port


class Process:
    def __init__(self, code: int | None) -> None:
        self.returncode = code

    def poll(self) -> int | None:
        return self.returncode


def test_a_service_still_starting_is_waited_for_with_progress(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}/health"  # nothing answers: a service still booting
    with pytest.raises(click.ClickException, match="within 2s, though it runs"):
        _wait_http(url, Process(None), "sidecar", patience=2.0, every=0.5)
    said = capsys.readouterr().out
    assert said.count("waiting for the sidecar") >= 2 and "it is still starting" in said


def test_a_service_that_exits_fails_the_start_at_once() -> None:
    with pytest.raises(click.ClickException, match="exited with code 3"):
        _wait_http(f"http://127.0.0.1:{free_port()}/health", Process(3), "agent", patience=60.0)
