"""The README stays a front page (short, with links), and every page it links to exists."""

from __future__ import annotations

import re

from datafari_rag.paths import PROJECT_ROOT

PAGES = ("architecture", "configuration", "indexing", "rag-api", "security", "streaming", "evaluation")
PAGES += ("benchmarks", "deployment", "search-api", "conversations", "citations", "cache", "guard", "mcp", "agentic")
PAGES += ("reranking", "context-assembly", "query-enhancement", "strategies", "users", "workflows", "ui", "index-jobs")


def test_the_readme_is_at_most_10_kb_and_links_every_page() -> None:
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode("utf-8")) <= 10 * 1024
    links = set(re.findall(r"\]\((docs/[^)#]+)", readme))
    assert {f"docs/{page}.md" for page in PAGES} <= links
    assert all((PROJECT_ROOT / link).is_file() for link in links)


def test_links_between_pages_resolve() -> None:
    for page in (PROJECT_ROOT / "docs").glob("*.md"):
        for link in re.findall(r"\]\(([^)#:]+\.md)", page.read_text(encoding="utf-8")):
            assert (page.parent / link).is_file(), f"{page.name} links to {link}"
