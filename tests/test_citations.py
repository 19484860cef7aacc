"""Citations: the SOURCES_USED line is taken out of answers and streams alike; references are checked."""

from __future__ import annotations

import random

import pytest

from datafari_rag.rag.citations import SourcesUsedFilter, cited_numbers, clean_answer, references

ANSWERS = [
    (
        "Leave is 25 days [1]. Managers get 30 [2, 3].\nSOURCES_USED: 1, 2, 3",
        "Leave is 25 days [1]. Managers get 30 [2, 3].",
    ),
    ("  \n Answer [1]\n\nsources_used: 1\n", "Answer [1]"),
    ("No marker here [4].\n\n", "No marker here [4]."),
    ("SOURCES_USED: none", ""),
    ("A line\nSOURCE of truth\nSOURCES", "A line\nSOURCE of truth\nSOURCES"),
    ("Text\n  SOURCES_USED 2\nignored after the marker", "Text"),
    ("Table:\n\ta\tb\n\nEnd.", "Table:\n\ta\tb\n\nEnd."),
    # written inline, as chat-core's example does: the marker and its list go, the text stays
    ("The pump is checked [1]. SOURCES_USED: 1, 3", "The pump is checked [1]."),
    ("Checked weekly [2] SOURCES_USED: 2. Then logged [1].", "Checked weekly [2]. Then logged [1]."),
    ("A [1] sources_used 1 and 3, B.", "A [1], B."),
    ("Nothing here SOURCES_USED: none", "Nothing here"),
    ("MY_SOURCES_USED is a name, days", "MY_SOURCES_USED is a name, days"),
]


@pytest.mark.parametrize(("raw", "expected"), ANSWERS)
def test_every_split_of_the_stream_shows_the_final_text(raw: str, expected: str) -> None:
    assert clean_answer(raw) == expected
    rng = random.Random(raw)
    for _ in range(300):
        shown, out, at = SourcesUsedFilter(), [], 0
        while at < len(raw):
            step = rng.randint(1, 6)
            out.append(shown.feed(raw[at : at + step]))
            at += step
        out.append(shown.finish())
        assert "".join(out) == expected


def test_the_filter_holds_back_only_a_short_tail() -> None:
    shown = SourcesUsedFilter()
    assert shown.feed("The answer is 25 days") == "The answer is 25 days"
    assert shown.feed(" [1].\nSOURC") == " [1]."  # the last line may still become the marker
    assert shown.feed("E of truth") == "\nSOURCE of truth"  # it did not


def test_references_are_the_cited_sources_that_exist() -> None:
    sources = [{"id": f"d{i}", "title": f"T{i}", "url": f"u{i}", "content": "text"} for i in (1, 2, 3)]
    raw = "A [2]. B [3, 1]. C [7].\nSOURCES_USED: 2, 9"
    assert cited_numbers(raw) == [2, 3, 1, 7, 9]
    assert [r["number"] for r in references(raw, sources)] == [2, 3, 1]  # 7 and 9 match no source
    assert references(raw, sources)[0] == {"number": 2, "id": "d2", "title": "T2", "url": "u2"}
    assert references("Nothing cited.", sources) == []
    inline = "A [2]. SOURCES_USED: 2, 3 written in 2024."
    assert cited_numbers(inline) == [2, 3] and [r["number"] for r in references(inline, sources)] == [2, 3]
