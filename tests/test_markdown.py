"""Answers rendered as Markdown for the web UI: what an LLM writes (lists, emphasis, code, tables,
links) becomes HTML, and nothing an answer holds (raw HTML, scripts, event handlers, javascript:
or data: links, inline styles) survives as markup."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from markdown_it import MarkdownIt

from datafari_rag.text.markdown import ATTRIBUTES, SCHEMES, TAGS, answer_html


class Elements(HTMLParser):
    """Every element of a fragment, with its attributes (what a browser would build)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


def test_what_an_llm_writes_is_rendered() -> None:
    html = answer_html("**Leave** is *25 days*:\n\n1. ask [1]\n2. wait\n\n`code`\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    for piece in ("<strong>Leave</strong>", "<em>25 days</em>", "<ol>", "<li>ask [1]</li>", "<code>code</code>"):
        assert piece in html
    assert "<table>" in html and "<td>1</td>" in html
    assert answer_html("[site](https://example.com)") == (
        '<p><a href="https://example.com" rel="noopener noreferrer">site</a></p>\n'
    )


HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[x](javascript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD4=)",
    '<a href="javascript:alert(1)">x</a>',
    '<p style="position:fixed">x</p>',
    "<iframe src=https://evil.example></iframe>",
    "![x](https://evil.example/pixel.png)",
    '<svg onload="alert(1)">',
    "| a |\n|---|\n| <script>x</script> |",
]


def unsafe(html: str) -> list[str]:
    """What in ``html`` is not on the allow-list: a tag, an attribute, a link's scheme."""
    found = []
    for tag, attrs in Elements(html).found:
        if tag not in TAGS:
            found.append(tag)
        for name, value in attrs:
            if name not in ATTRIBUTES.get(tag, set()) | {"rel"}:
                found.append(f"{tag}[{name}]")
            elif name == "href" and urlsplit(value or "").scheme not in SCHEMES:
                found.append(f"{tag}[href={value}]")
    return found


@pytest.mark.parametrize("hostile", HOSTILE)
def test_nothing_an_answer_holds_survives_as_markup(hostile: str) -> None:
    html = answer_html(hostile)
    assert Elements(html).found, html  # rendered: as text in a paragraph or a table
    assert unsafe(html) == [], (hostile, html)


def test_the_check_finds_markup_when_nothing_cleans_it() -> None:
    """Control: the same inputs through a Markdown renderer that keeps raw HTML, uncleaned."""
    raw = MarkdownIt("commonmark", {"html": True}).enable("table")
    caught = [hostile for hostile in HOSTILE if unsafe(raw.render(hostile))]
    assert len(caught) >= 6, caught
