"""Answers as the web UI shows them: an LLM writes Markdown (lists, emphasis, code), rendered to
HTML (CommonMark and tables, by markdown-it-py; any HTML in the answer is text), then cleaned to
an allow-list of tags and attributes by nh3 — links only to http(s) and mailto, opened with
``rel="noopener noreferrer"`` — so that nothing an answer holds can run in the page."""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

TAGS = {
    "p", "br", "hr", "em", "strong", "del", "code", "pre", "blockquote",
    "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "a",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}  # no style: the page's policy refuses inline styles
SCHEMES = {"http", "https", "mailto"}

_renderer = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable("strikethrough")


def answer_html(text: str) -> str:
    """``text`` (Markdown) as safe HTML."""
    return nh3.clean(
        _renderer.render(text),
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=SCHEMES,
        link_rel="noopener noreferrer",
    )
