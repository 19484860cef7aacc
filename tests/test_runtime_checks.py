"""The local runtime says clearly what is missing instead of failing obscurely."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from datafari_rag.solr import runtime
from datafari_rag.solr.runtime import RuntimeProblem, java_version


def _fake_tool(folder: Path, name: str, stderr: str) -> None:
    tool = folder / name
    tool.write_text(f"#!/bin/sh\necho '{stderr}' >&2\n")
    tool.chmod(0o755)


def test_missing_java_is_named() -> None:
    with pytest.raises(RuntimeProblem, match="Java 17"):
        java_version("no-such-java-binary")


def test_old_java_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_tool(tmp_path, "java", 'openjdk version "11.0.22" 2024-01-16')
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(RuntimeProblem, match="is Java 11; the local Solr needs Java 17"):
        java_version()


def test_installed_java_is_recent_enough() -> None:
    assert java_version() >= 17


def test_missing_maven_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "STAMP", tmp_path / "no-stamp")
    with pytest.raises(RuntimeProblem, match="Apache Maven"):
        runtime.ensure_jars(mvn="no-such-mvn-binary", echo=False)
