"""A workflow as its API describes it, validated, and as the ``rag.properties`` keys it sets.

A workflow is the product's pipeline with some stages chosen: its retrieval, strategy, prompt
instructions and templates, parent-child enrichment, query enhancers, source filters, reranker and, at indexing
time, its chunker. Running it is running the pipeline with those keys over the current settings,
so a workflow can do exactly what the configuration can, and is checked by the same rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..config import KEYS, MAX_INSTRUCTIONS, ConfigError, Settings, checked, convert
from ..filters import source_filter
from ..prompts.overrides import TemplateError, checked_templates
from ..registry import CHUNKERS, QUERY_ENHANCERS, RERANKERS, RETRIEVAL_MODES, STRATEGIES, Registry

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$")
COLLECTION = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,29}$")  # <it>_FileShare and <it>_VectorMain
FIELDS = {
    "name",
    "description",
    "retrieval",
    "strategy",
    "parentChild",
    "instructions",
    "prompts",
    "chunker",
    "queryEnhancers",
    "filters",
    "ranker",
    "collection",
    "default",
}
CHUNKER_FIELDS = {"kind", "maxChunkSize", "overlap", "evaluator", "threshold"}
RANKER_OPTIONS = {"api": {"url", "model", "apiKey"}, "onnx": {"path"}, "llm": set()}
SECRET_OPTIONS = {"apiKey"}  # saved, used, never shown back


class WorkflowError(ValueError):
    """A workflow request that cannot be done; ``label`` is the error's Datafari label."""

    def __init__(self, label: str, message: str) -> None:
        super().__init__(message)
        self.label = label


def _bad(message: str) -> WorkflowError:
    return WorkflowError("workflowBadRequest", message)


@dataclass(frozen=True)
class ChunkerSpec:
    kind: str = "recursive"
    max_chunk_size: int = 600  # characters
    overlap: int = 0
    evaluator: bool = False  # an LLM scores each chunk; below the threshold it is dropped
    threshold: float = 0.9

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "maxChunkSize": self.max_chunk_size,
            "overlap": self.overlap,
            "evaluator": self.evaluator,
            "threshold": self.threshold,
        }


@dataclass(frozen=True)
class WorkflowSpec:
    name: str
    description: str = ""
    retrieval: str = "bm25"
    strategy: str = "simple"
    parent_child: bool = False
    instructions: str = ""
    prompts: dict[str, str] = field(default_factory=dict)  # answer prompts replaced (prompts/overrides.py)
    chunker: ChunkerSpec = field(default_factory=ChunkerSpec)
    enhancers: tuple[tuple[str, dict[str, Any]], ...] = ()  # (kind, options), in order
    filters: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ranker: tuple[str, int, dict[str, Any]] | None = None  # (kind, topN, options)
    collection: str = ""  # its own <collection>_FileShare and _VectorMain; empty: the configuration's
    default: bool = False

    def as_dict(self, secrets: bool = False) -> dict[str, Any]:
        """The API's JSON; a ranker's API key is shown as set or not, never as itself."""
        ranker = None
        if self.ranker is not None:
            kind, top_n, options = self.ranker
            shown = {k: (v if secrets or k not in SECRET_OPTIONS else bool(v)) for k, v in options.items()}
            ranker = {"kind": kind, "topN": top_n, **shown}
        return {
            "name": self.name,
            "description": self.description,
            "retrieval": self.retrieval,
            "strategy": self.strategy,
            "parentChild": self.parent_child,
            "instructions": self.instructions,
            "prompts": dict(self.prompts),
            "chunker": self.chunker.as_dict(),
            "queryEnhancers": [{"kind": kind, **options} for kind, options in self.enhancers],
            "filters": {k: list(v) for k, v in self.filters.items()},
            "ranker": ranker,
            "collection": self.collection,
            "default": self.default,
        }

    def chunking(self) -> dict[str, str]:
        """The indexing keys of its chunker: they apply to the workflow's indexing jobs only (never
        to the configuration's own indexing, even for the default workflow)."""
        c = self.chunker
        return {
            "vector.chunker": c.kind,
            "vector.chunksize": str(c.max_chunk_size),
            "vector.chunksize.unit": "characters",
            "vector.maxoverlap": str(c.overlap),
            "vector.chunker.evaluator": str(c.evaluator).lower(),
            "vector.chunker.evaluator.threshold": str(c.threshold),
        }

    def overrides(self) -> dict[str, str]:
        """The ``rag.properties`` keys this workflow's answers run with, as text (as the file holds them)."""
        keys = {
            "retrieval.method": self.retrieval,
            "rag.strategy": self.strategy,
            "context.neighbours": "1" if self.parent_child else "0",
            "prompt.instructions": self.instructions,
            "prompt.templates": json.dumps(self.prompts, ensure_ascii=False) if self.prompts else "",
            "retrieval.filters": json.dumps({k: list(v) for k, v in self.filters.items()}) if self.filters else "",
            "chat.query.rewriting.enabled.bm25": "false",
            "chat.query.rewriting.enabled.vector": "false",
            "query.multiQuery.count": "0",
            "query.hyde.enabled": "false",
            "query.selfQuery.fields": "",
            "rerank.enabled": "false",
        }
        for kind, options in self.enhancers:
            keys |= ENHANCERS[kind].keys(options)
        if self.collection:
            keys["solr.collection.main"] = f"{self.collection}_FileShare"
            keys["solr.collection.vector"] = f"{self.collection}_VectorMain"
        if self.ranker is not None:
            kind, top_n, options = self.ranker
            keys |= {"rerank.enabled": "true", "rerank.backend": kind, "rerank.topN": str(top_n)}
            names = {"url": "rerank.api.url", "model": "rerank.api.model", "apiKey": "rerank.api.key"}
            keys |= {names[k]: v for k, v in options.items() if k in names}
            if "path" in options:
                keys["rerank.onnx.path"] = options["path"]
        return keys

    def settings(self, base: Settings, indexing: bool = False) -> Settings:
        """``base`` with this workflow's keys (and its chunker's, for ``indexing``), checked as the
        properties file's are (ConfigError)."""
        keys = {**self.overrides(), **(self.chunking() if indexing else {})}
        changes = {KEYS[key].name: convert(key, raw) for key, raw in keys.items()}
        return checked(base.replace(**changes))


def _text(body: dict[str, Any], name: str, maximum: int, default: str = "") -> str:
    value = body.get(name, default)
    if not isinstance(value, str) or len(value) > maximum:
        raise _bad(f"'{name}' is a string of at most {maximum} characters.")
    return value


def _choice(body: dict[str, Any], name: str, choices: Registry, default: str) -> str:
    value = body.get(name, default)
    if value not in choices:
        raise _bad(f"'{name}' is one of {', '.join(choices.names)}.")
    return str(value)


def _bool(body: dict[str, Any], name: str) -> bool:
    value = body.get(name, False)
    if not isinstance(value, bool):
        raise _bad(f"'{name}' is true or false.")
    return value


def _int(body: dict[str, Any], name: str, low: int, high: int, default: int) -> int:
    value = body.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise _bad(f"'{name}' is a whole number from {low} to {high}.")
    return value


def _object(value: Any, name: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(f"'{name}' is an object.")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise _bad(f"Unknown field(s) in '{name}': {', '.join(unknown)}.")
    return value


def _chunker(value: Any) -> ChunkerSpec:
    if value is None:
        return ChunkerSpec()
    body = _object(value, "chunker", CHUNKER_FIELDS)
    size = _int(body, "maxChunkSize", 50, 8000, 600)
    threshold = body.get("threshold", 0.9)
    if not isinstance(threshold, int | float) or isinstance(threshold, bool) or not 0 <= threshold <= 1:
        raise _bad("'chunker.threshold' is a number from 0 to 1.")
    return ChunkerSpec(
        _choice(body, "kind", CHUNKERS, "recursive"),
        size,
        _int(body, "overlap", 0, size - 1, 0),
        _bool(body, "evaluator"),
        float(threshold),
    )


def _enhancers(value: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _bad("'queryEnhancers' is a list of {kind, …}.")
    found: list[tuple[str, dict[str, Any]]] = []
    for item in value:
        kind = item.get("kind") if isinstance(item, dict) else None
        if not isinstance(kind, str) or kind not in QUERY_ENHANCERS:
            raise _bad(f"Each query enhancer has a 'kind' among {', '.join(QUERY_ENHANCERS.names)}.")
        if any(kind == k for k, _ in found):
            raise _bad(f"The query enhancer '{kind}' is given twice.")
        spec = ENHANCERS[kind]
        options = {k: v for k, v in _object(item, "queryEnhancers", {"kind", *spec.options}).items() if k != "kind"}
        found.append((kind, spec.check(options)))
    return tuple(found)


def _collection(value: Any) -> str:
    if value == "":
        return ""
    if not isinstance(value, str) or not COLLECTION.match(value) or value.lower() in ("fileshare", "vectormain"):
        raise _bad(
            "'collection' is empty (the configuration's) or 1 to 30 letters, digits or '_', starting with a "
            "letter: the workflow's collections are <collection>_FileShare and <collection>_VectorMain."
        )
    return value


def _ranker(value: Any) -> tuple[str, int, dict[str, Any]] | None:
    if value is None:
        return None
    kind = value.get("kind") if isinstance(value, dict) else None
    if not isinstance(kind, str) or kind not in RERANKERS:
        raise _bad(f"'ranker' is null or has a 'kind' among {', '.join(RERANKERS.names)}.")
    body = _object(value, "ranker", {"kind", "topN", *RANKER_OPTIONS[kind]})
    options = {k: v for k, v in body.items() if k not in ("kind", "topN")}
    if not all(isinstance(v, str) and len(v) <= 2048 for v in options.values()):
        raise _bad("The ranker's options are strings of at most 2048 characters.")
    return kind, _int(body, "topN", 2, 100, 20), options


def parse_workflow(body: dict[str, Any], base: Settings, secrets_kept: dict[str, Any] | None = None) -> WorkflowSpec:
    """A workflow from its JSON, every field checked, then its settings checked as a whole (a
    reranker that cannot be built, a self-query field that does not exist): WorkflowError.
    ``secrets_kept``: the stored ranker's options, whose API key a client that did not send one keeps."""
    unknown = sorted(set(body) - FIELDS)
    if unknown:
        raise _bad(f"Unknown field(s): {', '.join(unknown)}.")
    name = body.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise _bad("'name' is 1 to 100 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit.")
    instructions = _text(body, "instructions", MAX_INSTRUCTIONS)
    try:
        prompts = checked_templates(body.get("prompts", {}), "'prompts'")
    except TemplateError as exc:
        raise _bad(str(exc)) from None
    try:
        filters = source_filter(body.get("filters") or None).values
    except ValueError as exc:
        raise _bad(str(exc)) from None
    ranker = _ranker(body.get("ranker"))
    if ranker is not None and secrets_kept and ranker[0] == "api" and "apiKey" not in ranker[2]:
        kept = {k: secrets_kept[k] for k in SECRET_OPTIONS & set(secrets_kept)}
        ranker = (ranker[0], ranker[1], {**ranker[2], **kept})
    spec = WorkflowSpec(
        name=name,
        description=_text(body, "description", 500),
        retrieval=_choice(body, "retrieval", RETRIEVAL_MODES, "bm25"),
        strategy=_choice(body, "strategy", STRATEGIES, "simple"),
        parent_child=_bool(body, "parentChild"),
        instructions=instructions,
        prompts=prompts,
        chunker=_chunker(body.get("chunker")),
        enhancers=_enhancers(body.get("queryEnhancers")),
        filters=filters,
        ranker=ranker,
        collection=_collection(body.get("collection", "")),
        default=_bool(body, "default"),
    )
    if spec.collection and spec.default:
        raise _bad("A workflow with its own collection cannot be the default: ai/rag serves the configured ones.")
    try:
        spec.settings(base, indexing=True)
    except ConfigError as exc:
        raise _bad(f"This workflow cannot run: {exc}") from None
    return spec


@dataclass(frozen=True)
class EnhancerSpec:
    """A query enhancer as a workflow gives it: its options, how they are checked, and the
    settings it turns on."""

    options: frozenset[str]
    check: Callable[[dict[str, Any]], dict[str, Any]]
    keys: Callable[[dict[str, Any]], dict[str, str]]


def _no_options(options: dict[str, Any]) -> dict[str, Any]:
    return {}


def _multi_query_options(options: dict[str, Any]) -> dict[str, Any]:
    count = _int(options, "count", 1, 5, 3)
    return {"count": count, "minVotes": _int(options, "minVotes", 1, count + 1, 1)}


def _self_query_options(options: dict[str, Any]) -> dict[str, Any]:
    fields = options.get("fields")
    if not isinstance(fields, list) or not fields or not all(isinstance(f, str) for f in fields):
        raise _bad("'selfQuery' needs 'fields': a list of field names.")
    return {"fields": fields}


# each query enhancer of the registry (registry.QUERY_ENHANCERS), by its name
ENHANCERS: dict[str, EnhancerSpec] = {
    "rewrite": EnhancerSpec(
        frozenset(),
        _no_options,
        lambda o: {"chat.query.rewriting.enabled.bm25": "true", "chat.query.rewriting.enabled.vector": "true"},
    ),
    "multiQuery": EnhancerSpec(
        frozenset({"count", "minVotes"}),
        _multi_query_options,
        lambda o: {
            "query.multiQuery.count": str(o.get("count", 3)),
            "query.multiQuery.minVotes": str(o.get("minVotes", 1)),
        },
    ),
    "hyde": EnhancerSpec(frozenset(), _no_options, lambda o: {"query.hyde.enabled": "true"}),
    "selfQuery": EnhancerSpec(
        frozenset({"fields"}),
        _self_query_options,
        lambda o: {"query.selfQuery.fields": ",".join(o.get("fields", []))},
    ),
}
