"""Solr's JSON update syntax, parsed without Solr."""

from __future__ import annotations

import pytest

from datafari_rag.solr.update_syntax import parse


def test_repeated_commands_as_solr_takes_them() -> None:
    body = (
        b'{"add": {"doc": {"id": "a"}}, "add": {"doc": {"id": "b"}, "commitWithin": 500},'
        b' "delete": {"id": "c"}, "delete": {"id": ["d", "e"]}, "delete": {"query": "source:old"},'
        b' "delete": ["f"], "commit": {}, "optimize": {}}'
    )
    commands = parse(body)
    assert [d["id"] for d in commands.adds] == ["a", "b"]
    assert commands.ids == ["c", "d", "e", "f"] and commands.queries == ["source:old"]
    assert commands.commit and commands.commit_within == 500


def test_a_list_is_documents_and_nested_objects_stay_objects() -> None:
    commands = parse(b'[{"id": "x", "meta": {"k": "v"}, "tags": ["a", "b"]}]')
    assert commands.adds == [{"id": "x", "meta": {"k": "v"}, "tags": ["a", "b"]}]
    assert not commands.commit and commands.ids == [] and commands.queries == []


@pytest.mark.parametrize(
    "body",
    [
        b'{"frobnicate": {}}',
        b'{"add": {"id": "no-doc-wrapper"}}',
        b'{"delete": {"id": ""}}',
        b'{"delete": {"id": 7}}',
        b'{"delete": {"other": 1}}',
        b"not json",
    ],
)
def test_malformed_updates_are_refused(body: bytes) -> None:
    with pytest.raises(ValueError):
        parse(body)


def test_bad_bytes_fail_their_document_not_the_parse() -> None:
    [doc] = parse(b'[{"id": "x", "exactContent": "caf\xe9"}]').adds
    with pytest.raises(UnicodeEncodeError):
        doc["exactContent"].encode("utf-8")
