"""The packages depend on each other in one direction: security/ knows nothing of the web API."""

from __future__ import annotations

import ast
from pathlib import Path

import datafari_rag

PACKAGE = Path(datafari_rag.__file__).parent


def _imports(folder: Path) -> dict[str, set[str]]:
    """Module → the datafari_rag modules it imports (relative imports resolved)."""
    found: dict[str, set[str]] = {}
    for path in folder.rglob("*.py"):
        parts = ["datafari_rag", *path.relative_to(PACKAGE).with_suffix("").parts]
        here = parts[:-1]  # the package a relative import starts from
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                module = ".".join([*base, *(node.module.split(".") if node.module else [])])
                names.add(module)
            elif isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
        found[".".join(parts)] = {n for n in names if n.startswith("datafari_rag")}
    return found


def test_security_imports_nothing_from_the_api_the_services_or_the_app() -> None:
    forbidden = ("datafari_rag.api", "datafari_rag.services", "datafari_rag.app", "flask")
    for module, imports in _imports(PACKAGE / "security").items():
        bad = [i for i in imports if i.startswith(forbidden)]
        assert not bad, f"{module} imports {bad}"
    source = "\n".join(p.read_text() for p in (PACKAGE / "security").rglob("*.py"))
    assert "import flask" not in source and "from flask" not in source


def test_only_the_api_and_the_app_reach_flask_request_state() -> None:
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).parts
        if rel[0] in ("api", "agent", "testing") or rel == ("app.py",) or rel == ("evaluation", "answers.py"):
            continue
        assert "from flask import" not in path.read_text(), path


def test_the_conversation_store_knows_nothing_of_the_web_api() -> None:
    forbidden = ("datafari_rag.api", "datafari_rag.services", "datafari_rag.app", "flask")
    for module, imports in _imports(PACKAGE / "conversations").items():
        bad = [i for i in imports if i.startswith(forbidden)]
        assert not bad, f"{module} imports {bad}"


def test_the_relational_store_imports_no_feature() -> None:
    """store/ is the ground the features stand on: the conversations, workflows and index jobs take
    its engine and transaction; it knows none of them (services.py assembles their stores)."""
    features = ("api", "services", "app", "live", "conversations", "workflows", "indexing", "rag", "retrieval")
    forbidden = tuple(f"datafari_rag.{f}" for f in features)
    for module, imports in _imports(PACKAGE / "store").items():
        bad = [i for i in imports if i.startswith(forbidden)]
        assert not bad, f"{module} imports {bad}"
