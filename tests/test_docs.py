"""The README stays a front page (short, with links), every page it links to exists, and every test a
page names as its evidence exists."""

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


def test_every_test_a_page_names_exists() -> None:
    """A page that quotes a test as its proof (``test_x.py::test_y`` or a test's name) must name one
    that runs: a renamed test left a page pointing at nothing."""
    tests = PROJECT_ROOT / "tests"
    defined = {m for f in tests.rglob("*.py") for m in re.findall(r"def (test_\w+)", f.read_text(encoding="utf-8"))}
    modules = {f.stem for f in tests.rglob("test_*.py")}
    pages = [PROJECT_ROOT / "README.md", PROJECT_ROOT / "CONTRIBUTING.md", *(PROJECT_ROOT / "docs").glob("*.md")]
    for page in pages:
        for name in set(re.findall(r"\b(test_[a-z0-9_]{8,})\b", page.read_text(encoding="utf-8"))):
            assert name in defined or name in modules, f"{page.name} names {name}, which no test file defines"
