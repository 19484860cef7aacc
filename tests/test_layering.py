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


# The layering docs/architecture.md states, from the entry points down: a package or module may
# import only from layers below its own (and from itself). A new package must find its place here.
LAYERS = [
    {"cli"},
    {"app", "first_run"},
    {"api"},
    {"live", "evaluation", "testing"},
    {"services"},
    {"indexing", "conversations", "workflows", "alerts"},
    {"rag"},
    {"retrieval"},
    {"prompts", "text", "solr", "store"},
    {"llm", "agent", "security", "logs", "config_docs"},
    {"config"},
    {"registry", "filters", "errors", "paths", "metrics", "words"},
    {"chunk_fields"},
]


def _unit(module: str) -> str:
    """The package or top-level module of ``datafari_rag`` a module belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_every_import_goes_down_the_documented_layers() -> None:
    layer = {unit: depth for depth, units in enumerate(LAYERS) for unit in units}
    graph = _imports(PACKAGE)
    units = {_unit(m) for m in graph} - {"__init__", "__main__"}
    assert units <= set(layer), f"not in LAYERS (and docs/architecture.md): {sorted(units - set(layer))}"
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if _unit(target) in layer
        and _unit(module) in layer
        and _unit(target) != _unit(module)
        and layer[_unit(target)] <= layer[_unit(module)]
    )
    assert not upward, upward


def test_no_module_imports_itself_back_through_others() -> None:
    found = _imports_cache()
    graph = {m: {t for t in ts if t in found} for m, ts in found.items()}
    state: dict[str, int] = {}  # 1: on the path being followed, 2: done
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, cycles[:5]


def _imports_cache() -> dict[str, set[str]]:
    """Module -> the modules it imports, a package's ``__init__`` named as the package."""
    found = _imports(PACKAGE)
    named = {m.removesuffix(".__init__"): ts for m, ts in found.items()}
    return {m: {t.removesuffix(".__init__") for t in ts} for m, ts in named.items()}
