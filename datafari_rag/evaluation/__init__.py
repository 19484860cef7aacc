"""Measuring the product on a corpus of one's own: retrieval quality (BEIR format) and answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class EvaluationInputError(ValueError):
    """A folder to evaluate that lacks a file, or holds a line that cannot be read: said in one line."""


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file; a missing file or a bad line names itself."""
    if not path.is_file():
        raise EvaluationInputError(f"{path} is missing")
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise EvaluationInputError(f"{path}:{number}: not JSON ({exc})") from exc
            if not isinstance(row, dict):
                raise EvaluationInputError(f"{path}:{number}: not a JSON object")
            rows.append(row)
    return rows


def missing_field(path: Path, exc: KeyError) -> EvaluationInputError:
    return EvaluationInputError(f"{path}: a record has no {exc.args[0]!r} field")
