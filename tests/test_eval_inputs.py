"""The eval commands refuse a folder they cannot read with one clear line, before touching Solr."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from datafari_rag.cli import main as cli


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["eval", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"corpus.jsonl": '{"_id": "d1", "text": "x"}\n'}, "qa.jsonl is missing"),
        ({"corpus.jsonl": '{"_id": "d1"\n', "qa.jsonl": ""}, "corpus.jsonl:1: not JSON"),
        ({"corpus.jsonl": "[1, 2]\n", "qa.jsonl": ""}, "corpus.jsonl:1: not a JSON object"),
        ({"corpus.jsonl": "", "qa.jsonl": '{"id": "q1"}\n'}, "qa.jsonl: a record has no 'question' field"),
    ],
)
def test_eval_answers_names_what_is_wrong(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code, output = run("answers", str(tmp_path))
    assert code == 1 and expected in output and "Traceback" not in output


def test_eval_retrieval_names_a_missing_qrels_file(tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n')
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    code, output = run("retrieval", str(tmp_path))
    assert code == 1 and "test.tsv is missing" in output


def test_eval_retrieval_names_bad_qrels_columns(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n')
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    (tmp_path / "qrels" / "test.tsv").write_text("query\tdoc\nq1\td1\n")
    code, output = run("retrieval", str(tmp_path))
    assert code == 1 and "expected the columns query-id, corpus-id, score" in output


@pytest.mark.parametrize("command", ["retrieval", "answers"])
@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("context.nope=1", "context.nope: names no setting"),
        ("rerank.topN=500", "rerank.topN: '500' must be at most 100"),
        ("context.dedup=maybe", "context.dedup: 'maybe' is not a valid bool"),
        ("context.neighbours", "'context.neighbours': expected key=value"),
    ],
)
def test_set_validates_each_key_as_the_properties_file_does(
    tmp_path: Path, command: str, option: str, expected: str
) -> None:
    code, output = run(command, str(tmp_path), "--set", option)
    assert code == 2 and expected in output
