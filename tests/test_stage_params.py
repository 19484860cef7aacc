"""The pipeline's stages take small parameter objects built once per configuration, never the
whole Settings: only what builds something from a configuration reads it."""

from __future__ import annotations

import ast
from pathlib import Path

import datafari_rag

PACKAGE = Path(datafari_rag.__file__).parent
STAGES = ("rag", "retrieval")
# what builds a stage's parameters, a service or a scorer from a configuration
BUILDERS = {"of", "__init__", "build_reranker", "_api", "_onnx", "_listwise", "_scorer"}


def _takes_settings(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    arguments = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
    return any(isinstance(a.annotation, ast.Name) and a.annotation.id == "Settings" for a in arguments)


def test_no_stage_function_takes_the_whole_settings() -> None:
    found = []
    for folder in STAGES:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                is_function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                if is_function and _takes_settings(node) and node.name not in BUILDERS:
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}")
    assert found == []


def test_no_stage_clones_the_settings_to_steer_itself() -> None:
    steering = [
        f"{path.relative_to(PACKAGE)}"
        for folder in STAGES
        for path in sorted((PACKAGE / folder).rglob("*.py"))
        if "settings.replace(" in path.read_text(encoding="utf-8") or "replace(settings" in path.read_text()
    ]
    assert steering == []
