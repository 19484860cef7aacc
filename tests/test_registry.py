"""Every extension point is named once, in registry.py: each registered entry has its
implementation where its feature lives, and every list a user or a client sees (the settings'
choices, a workflow's checks, the OpenAPI enums, the CLI's choices, the web UI's lists) is the
registry's — so a new entry is added in the registry and its implementation, nowhere else."""

from __future__ import annotations

import dataclasses
import html
import json
import re

import click
import pytest

from datafari_rag import cli
from datafari_rag.api.http.openapi import document
from datafari_rag.api.web_ui.ui import POINTS, STATIC
from datafari_rag.app import create_app
from datafari_rag.config import KEYS, Settings
from datafari_rag.indexing.chunkers import CHUNKERS as CHUNKER_FUNCTIONS
from datafari_rag.indexing.chunkers import chunk_document
from datafari_rag.rag.answer_strategies import ANSWER_STRATEGIES
from datafari_rag.registry import (
    CHUNKERS,
    EXTENSION_POINTS,
    LLM_SERVICES,
    QUERY_ENHANCERS,
    RERANKERS,
    RETRIEVAL_MODES,
    STRATEGIES,
    Registry,
    returns_documents,
)
from datafari_rag.retrieval.dispatch import RETRIEVERS
from datafari_rag.retrieval.rerank import SCORERS
from datafari_rag.services import LLM_BUILDERS
from datafari_rag.workflows.spec import ENHANCERS, RANKER_OPTIONS, WorkflowError, parse_workflow

TEXT = "The boiler is checked every week. " * 40


def test_every_registered_entry_has_its_implementation() -> None:
    assert set(RETRIEVERS) == set(RETRIEVAL_MODES.names)
    assert set(SCORERS) == set(RERANKERS.names)
    assert set(CHUNKER_FUNCTIONS) == set(CHUNKERS.names)
    assert set(ENHANCERS) == set(QUERY_ENHANCERS.names)
    assert set(RANKER_OPTIONS) == set(RERANKERS.names)
    assert set(ANSWER_STRATEGIES) == set(STRATEGIES.names)
    assert set(LLM_BUILDERS) == set(LLM_SERVICES.names)
    assert all(e.returns in ("passages", "documents") for e in RETRIEVAL_MODES)
    assert returns_documents("bm25") and not returns_documents("vector")


@pytest.mark.parametrize("kind", CHUNKERS.names)
def test_every_chunker_keeps_the_same_contract(kind: str) -> None:
    """Without the embedding model or the LLM it may need, every chunker still cuts the text, in
    pieces of the configured size at most, that together hold every word."""
    settings = Settings(vector_chunker=kind, vector_chunk_unit="characters", vector_chunk_size=200)
    chunks = chunk_document(TEXT, settings, None, None).chunks
    assert chunks and all(isinstance(c, str) and 0 < len(c) <= 200 for c in chunks)
    assert set(" ".join(chunks).split()) == set(TEXT.split())


def test_the_settings_offer_the_registry_choices() -> None:
    keys = {f.metadata["key"]: f for f in dataclasses.fields(Settings)}
    for registry in (RETRIEVAL_MODES, STRATEGIES, CHUNKERS, RERANKERS):
        choices = set(keys[registry.point].metadata["choices"]) - {""}
        assert choices == set(registry.names), registry.point
    assert set(KEYS) >= {r.point for r in (RETRIEVAL_MODES, STRATEGIES, CHUNKERS, RERANKERS)}


@pytest.mark.parametrize(("field", "registry"), [("retrieval", RETRIEVAL_MODES), ("strategy", STRATEGIES)])
def test_a_workflow_takes_every_registered_entry_and_nothing_else(field: str, registry: Registry) -> None:
    for name in registry.names:
        assert getattr(parse_workflow({"name": "w", field: name}, Settings()), field) == name
    with pytest.raises(WorkflowError, match=", ".join(registry.names)):
        parse_workflow({"name": "w", field: "not-registered"}, Settings())


def test_the_openapi_enums_are_the_registry() -> None:
    schemas = document(create_app(Settings()), 4000)["components"]["schemas"]
    workflow = schemas["WorkflowSpec"]["properties"]
    assert workflow["retrieval"]["enum"] == list(RETRIEVAL_MODES.names)
    assert workflow["strategy"]["enum"] == list(STRATEGIES.names)


def test_the_cli_offers_the_registry_modes() -> None:
    choices = [p.type for c in _commands(cli.main) for p in c.params if isinstance(p.type, click.Choice)]
    assert any(tuple(t.choices) == RETRIEVAL_MODES.names for t in choices)


def test_the_web_ui_lists_come_from_the_registry() -> None:
    assert json.loads(html.unescape(POINTS)) == {p: list(r.names) for p, r in EXTENSION_POINTS.items()}
    script = (STATIC / "workflows.js").read_text(encoding="utf-8")
    for registry in EXTENSION_POINTS.values():
        listed = re.findall(r"\[\s*\"" + re.escape(registry.names[0]) + r"\"", script)
        assert not listed, f"workflows.js lists {registry.point} itself"
    assert 'name="extension-points" content="{{EXTENSION_POINTS}}"' in (STATIC / "index.html").read_text()


def _commands(group: click.Command) -> list[click.Command]:
    found = [group]
    for command in getattr(group, "commands", {}).values():
        found += _commands(command)
    return found
