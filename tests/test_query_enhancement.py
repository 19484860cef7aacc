"""Query enhancement's parsing of the LLM's answers: whatever it writes, only whitelisted fields,
known values and real dates become filters, and a failure leaves the question as it is."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, datetime

import pytest

from datafari_rag.config import ConfigError, Settings, load_settings
from datafari_rag.filters import SourceFilter
from datafari_rag.llm import LlmError, Usage
from datafari_rag.rag.query_enhancement import hypothetical_passage, self_query, variants


class Replies:
    """An LLM double answering a fixed text (or failing), recording the prompts."""

    def __init__(self, reply: str | None) -> None:
        self.reply, self.prompts = reply, []

    def generate(self, messages: list, usage: Usage | None = None) -> str:
        self.prompts.append("\n".join(m["content"] for m in messages))
        if self.reply is None:
            raise LlmError("down")
        return self.reply

    def stream(self, messages: list, usage: Usage | None = None) -> Iterator[str]:
        yield self.generate(messages, usage)


SETTINGS = Settings(query_multi_query=2, query_self_query_fields="language,source,last_modified")
KNOWN = {"language": ["en", "fr"], "source": ["HR share", "IT share"]}


def test_variants_are_cleaned_deduplicated_and_bounded() -> None:
    reply = 'Sure! ```json\n{"queries": ["leave days", "Leave days", "q?", "holidays", "more", 3]}\n```'
    assert variants(Replies(reply), SETTINGS.query_multi_query, "q?") == ["leave days", "holidays"]
    assert variants(Replies("no json"), SETTINGS.query_multi_query, "q") == []
    assert variants(Replies(None), SETTINGS.query_multi_query, "q") == []  # the LLM down: no variants, no error


def test_hyde_returns_the_passage_or_nothing() -> None:
    assert hypothetical_passage(Replies("  Leave is 25 days.  "), "q") == "Leave is 25 days."
    assert hypothetical_passage(Replies(None), "q") is None


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ({"query": "leave", "filters": {"language": ["FR"]}}, ("leave", {"language": ("fr",)}, {})),
        ({"filters": {"source": "hr SHARE"}}, ("the question", {"source": ("HR share",)}, {})),
        ({"query": "x", "filters": {"language": ["*:* OR id:*"], "allow_token_document": ["board"]}}, None),
        ({"query": "x", "filters": {"id": ["secret"], "author": ["me"]}}, None),  # fields not allowed
        (
            {"query": "reports", "dates": {"last_modified": {"from": "2024-01-01", "to": None}}},
            ("reports", {}, {"last_modified": (datetime(2024, 1, 1), None)}),
        ),
        ({"query": "x", "dates": {"last_modified": {"from": "2025-01-01", "to": "2024-01-01"}}}, None),
        ({"query": "x", "dates": {"last_modified": {"from": "last year"}}}, None),
        ("not an object", None),
    ],
)
def test_self_query_keeps_only_what_is_allowed(reply: object, expected: tuple | None) -> None:
    llm = Replies(json.dumps(reply))
    found = self_query(llm, tuple(SETTINGS.self_query_fields), "the question", KNOWN, today=date(2026, 11, 24))
    if expected is None:
        assert found is None
        return
    query, values, ranges = expected
    assert found == (query, SourceFilter(values, ranges))
    assert "language (values: en, fr)" in llm.prompts[0] and "Today is 2026-11-24." in llm.prompts[0]


def test_filters_become_terms_and_ranges_built_by_the_product() -> None:
    f = SourceFilter({"language": ("fr",)}, {"last_modified": (datetime(2024, 1, 1), None)})
    params = f.vector_params()
    assert ("fq", "last_modified:[2024-01-01T00:00:00Z TO *]") in params
    assert ("fq", "{!terms f=language separator=$filter_sep v=$filter_0}") in params
    narrowed = SourceFilter({"language": ("en",)}).narrowed(f)
    assert ("fq", "-*:*") in narrowed.main_params()  # no language in common: nothing matches


def test_self_query_fields_are_checked_when_the_settings_load(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "rag.properties").write_text("query.selfQuery.fields=language,allow_token_document\n")
    with pytest.raises(ConfigError, match="allow_token_document not among"):
        load_settings(tmp_path / "rag.properties", env={})
