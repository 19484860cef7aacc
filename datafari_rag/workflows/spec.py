"""A workflow, declared once: one pydantic model is the API's JSON (and its OpenAPI schema), the
document the store keeps, the web UI's form (its schema in the page) and, through each part's
``settings()``, the typed settings its stages read.

A workflow is the product's pipeline with some stages chosen: its retrieval, strategy, prompt
instructions and templates, parent-child enrichment, query enhancers, source filters, reranker and, at indexing
time, its chunker. Running it is running the pipeline with those settings over the current ones,
so a workflow can do exactly what the configuration can, and is checked by the same rules
(``config.checked``). A new field is a field here and its line in ``changes()`` (CONTRIBUTING.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..config import MAX_INSTRUCTIONS, ConfigError, Settings, checked
from ..errors import refusal
from ..filters import FIELDS as FILTER_FIELDS
from ..filters import source_filter
from ..prompts.overrides import PROMPTS_SCHEMA, TemplateError, checked_templates
from ..registry import CHUNKERS, RETRIEVAL_MODES, STRATEGIES, Registry

SECRET_OPTIONS = {"apiKey"}  # saved sealed, used, never shown back


class WorkflowError(ValueError):
    """A workflow request that cannot be done; ``label`` is the error's Datafari label."""

    def __init__(self, label: str, message: str) -> None:
        super().__init__(message)
        self.label = label


def _said(sentence: str) -> PydanticCustomError:
    """A refusal whose sentence is whole (errors.SENTENCES["checked"])."""
    return PydanticCustomError("checked", "{reason}", {"reason": sentence})


def _rule(check: Callable[[Any], bool], sentence: str) -> AfterValidator:
    def run(value: Any) -> Any:
        if not check(value):
            raise _said(sentence)
        return value

    return AfterValidator(run)


def _one_of(registry: Registry, name: str) -> Any:
    """A name of ``registry``'s entries: the list is the registry's, in the schema too."""
    sentence = f"'{name}' is one of {', '.join(registry.names)}."
    schema = {"type": "string", "enum": list(registry.names), "description": registry.help()}
    return Annotated[str, _rule(lambda v: v in registry, sentence), WithJsonSchema(schema)]


def _templates(value: Any) -> dict[str, str]:
    try:
        return checked_templates(value, "'prompts'")
    except TemplateError as exc:
        raise _said(str(exc)) from None


def _filters(value: Any) -> dict[str, tuple[str, ...]]:
    try:
        return dict(source_filter(value or None).values)
    except ValueError as exc:
        raise _said(str(exc)) from None


NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$")
COLLECTION = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,29}$")  # <it>_FileShare and <it>_VectorMain
WorkflowName = Annotated[
    str,
    _rule(
        lambda v: bool(NAME.match(v)),
        "'name' is 1 to 100 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit.",
    ),
    WithJsonSchema({"type": "string", "pattern": NAME.pattern, "maxLength": 100}),
]
Collection = Annotated[
    str,
    _rule(
        lambda v: v == "" or (bool(COLLECTION.match(v)) and v.lower() not in ("fileshare", "vectormain")),
        "'collection' is empty (the configuration's) or 1 to 30 letters, digits or '_', starting with a letter: "
        "the workflow's collections are <collection>_FileShare and <collection>_VectorMain.",
    ),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": f"^$|{COLLECTION.pattern}",
            "description": "its own <collection>_FileShare and _VectorMain",
        }
    ),
]
Templates = Annotated[
    dict[str, str],
    BeforeValidator(_templates),
    WithJsonSchema(PROMPTS_SCHEMA),
]
Filters = Annotated[
    dict[str, tuple[str, ...]],
    BeforeValidator(_filters),
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": {"enum": list(FILTER_FIELDS)},
            "additionalProperties": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "description": "every search restricted to sources holding one of these values in each field",
        }
    ),
]
Option = Annotated[str | None, Field(max_length=2048)]


class Part(BaseModel):
    """A part of a workflow: exactly these fields, each of its type (no coercion), never changed."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ChunkerSpec(Part):
    """How a workflow's documents are cut at indexing time, and whether an LLM judges each chunk."""

    kind: _one_of(CHUNKERS, "chunker.kind") = "recursive"  # type: ignore[valid-type]
    maxChunkSize: int = Field(default=600, ge=50, le=8000, description="characters")
    overlap: int = Field(default=0, ge=0, description="characters, less than maxChunkSize")
    evaluator: bool = Field(default=False, description="an LLM scores each chunk; below the threshold it is dropped")
    threshold: float = Field(default=0.9, ge=0, le=1)

    @model_validator(mode="after")
    def _overlap_within(self) -> ChunkerSpec:
        if self.overlap >= self.maxChunkSize:
            raise _said(f"'chunker.overlap' is a whole number from 0 to {self.maxChunkSize - 1}.")
        return self

    def settings(self) -> dict[str, Any]:
        """The indexing settings of its chunker: they apply to the workflow's indexing jobs only
        (never to the configuration's own indexing, even for the default workflow)."""
        return {
            "vector_chunker": self.kind,
            "vector_chunk_size": self.maxChunkSize,
            "vector_chunk_unit": "characters",
            "vector_max_overlap": self.overlap,
            "vector_chunker_evaluator": self.evaluator,
            "vector_chunker_evaluator_threshold": self.threshold,
        }


# --- query enhancers: one model per entry of registry.QUERY_ENHANCERS -----------------------------


class Rewrite(Part):
    kind: Literal["rewrite"]

    def settings(self) -> dict[str, Any]:
        return {"rewriting_bm25": True, "rewriting_vector": True}


class MultiQuery(Part):
    kind: Literal["multiQuery"]
    count: int = Field(default=3, ge=1, le=5)
    minVotes: int = Field(default=1, ge=1, description="at most count + 1")

    @model_validator(mode="after")
    def _votes_within(self) -> MultiQuery:
        if self.minVotes > self.count + 1:
            raise _said(f"'minVotes' is a whole number from 1 to {self.count + 1}.")
        return self

    def settings(self) -> dict[str, Any]:
        return {"query_multi_query": self.count, "query_multi_query_min_votes": self.minVotes}


class Hyde(Part):
    kind: Literal["hyde"]

    def settings(self) -> dict[str, Any]:
        return {"query_hyde": True}


class SelfQuery(Part):
    kind: Literal["selfQuery"]
    fields: list[Annotated[str, Field(min_length=1, max_length=100)]] = Field(min_length=1, max_length=20)

    def settings(self) -> dict[str, Any]:
        return {"query_self_query_fields": ",".join(self.fields)}


Enhancer = Annotated[Rewrite | MultiQuery | Hyde | SelfQuery, Field(discriminator="kind")]


def _kind(model: type[Part]) -> str:
    return str(get_args(model.model_fields["kind"].annotation)[0])


ENHANCERS: dict[str, type[Part]] = {_kind(c): c for c in (Rewrite, MultiQuery, Hyde, SelfQuery)}


# --- rerankers: one model per entry of registry.RERANKERS ------------------------------------------


class Ranker(Part):
    kind: str
    topN: int = Field(default=20, ge=2, le=100)

    def settings(self) -> dict[str, Any]:
        return {"rerank_enabled": True, "rerank_backend": self.kind, "rerank_top_n": self.topN}


class ApiRanker(Ranker):
    kind: Literal["api"]
    url: Option = None  # each None: the configuration's
    model: Option = None
    apiKey: Option = None

    def settings(self) -> dict[str, Any]:
        given = {"rerank_api_url": self.url, "rerank_api_model": self.model, "rerank_api_key": self.apiKey}
        return super().settings() | {k: v for k, v in given.items() if v is not None}


class OnnxRanker(Ranker):
    kind: Literal["onnx"]
    path: Option = None

    def settings(self) -> dict[str, Any]:
        return super().settings() | ({"rerank_onnx_path": self.path} if self.path is not None else {})


class LlmRanker(Ranker):
    kind: Literal["llm"]


RankerSpec = Annotated[ApiRanker | OnnxRanker | LlmRanker, Field(discriminator="kind")]
RANKER_OPTIONS: dict[str, type[Part]] = {_kind(c): c for c in (ApiRanker, OnnxRanker, LlmRanker)}


class WorkflowSpec(Part):
    """A workflow (docs/workflows.md)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, title="Workflow")

    name: WorkflowName
    description: str = Field(default="", max_length=500)
    retrieval: _one_of(RETRIEVAL_MODES, "retrieval") = "bm25"  # type: ignore[valid-type]
    strategy: _one_of(STRATEGIES, "strategy") = "simple"  # type: ignore[valid-type]
    parentChild: bool = Field(default=False, description="a chunk found brings its neighbours")
    instructions: str = Field(default="", max_length=MAX_INSTRUCTIONS, description="added to the answer prompt")
    prompts: Templates = Field(default_factory=dict)
    chunker: ChunkerSpec = ChunkerSpec()  # frozen: one default serves every workflow
    queryEnhancers: list[Enhancer] = Field(default_factory=list)
    filters: Filters = Field(default_factory=dict)
    ranker: RankerSpec | None = None
    collection: Collection = ""
    default: bool = Field(default=False, description="what ai/rag runs")

    @model_validator(mode="after")
    def _whole(self) -> WorkflowSpec:
        kinds = [e.kind for e in self.queryEnhancers]
        twice = sorted({k for k in kinds if kinds.count(k) > 1})
        if twice:
            raise _said(f"The query enhancer '{twice[0]}' is given twice.")
        if self.collection and self.default:
            raise _said("A workflow with its own collection cannot be the default: ai/rag serves the configured ones.")
        return self

    def as_dict(self, secrets: bool = False) -> dict[str, Any]:
        """The API's JSON (a ranker's API key shown as set or not) or, with ``secrets``, the
        document the store keeps."""
        shown = self.model_dump(mode="json", exclude={"ranker"})
        if self.ranker is not None:
            ranker = self.ranker.model_dump(mode="json", exclude_none=True)
            if not secrets:
                ranker |= {k: True for k in SECRET_OPTIONS & set(ranker)}
            shown["ranker"] = ranker
        else:
            shown["ranker"] = None
        return shown

    def changes(self, indexing: bool = False) -> dict[str, Any]:
        """The settings this workflow's answers run with (and, for ``indexing``, its chunker's), as
        ``Settings`` fields: every stage a workflow can choose is reset, then set as it says."""
        changes: dict[str, Any] = {
            "retrieval_method": self.retrieval,
            "rag_strategy": self.strategy,
            "context_neighbours": 1 if self.parentChild else 0,
            "prompt_instructions": self.instructions,
            "prompt_templates": json.dumps(self.prompts, ensure_ascii=False) if self.prompts else "",
            "retrieval_filters": json.dumps({k: list(v) for k, v in self.filters.items()}) if self.filters else "",
            "rewriting_bm25": False,
            "rewriting_vector": False,
            "query_multi_query": 0,
            "query_hyde": False,
            "query_self_query_fields": "",
            "rerank_enabled": False,
        }
        for enhancer in self.queryEnhancers:
            changes |= enhancer.settings()
        if self.collection:
            changes |= {
                "collection_main": f"{self.collection}_FileShare",
                "collection_vector": f"{self.collection}_VectorMain",
            }
        if self.ranker is not None:
            changes |= self.ranker.settings()
        if indexing:
            changes |= self.chunker.settings()
        return changes

    def settings(self, base: Settings, indexing: bool = False) -> Settings:
        """``base`` with this workflow's settings, checked as the configuration's are (ConfigError)."""
        return checked(base.replace(**self.changes(indexing)))


def parse_workflow(body: Any, base: Settings, secrets_kept: dict[str, Any] | None = None) -> WorkflowSpec:
    """A workflow from its JSON, every field checked, then its settings checked as a whole (a
    self-query field that does not exist): WorkflowError. ``secrets_kept``: the stored ranker's
    options, whose API key a client that did not send one keeps."""
    try:
        spec = WorkflowSpec.model_validate(body)
    except ValidationError as exc:
        raise WorkflowError("workflowBadRequest", refusal(exc)) from None
    ranker = spec.ranker
    if isinstance(ranker, ApiRanker) and ranker.apiKey is None and secrets_kept and secrets_kept.get("apiKey"):
        spec = spec.model_copy(update={"ranker": ranker.model_copy(update={"apiKey": secrets_kept["apiKey"]})})
    try:
        spec.settings(base, indexing=True)
    except ConfigError as exc:
        raise WorkflowError("workflowBadRequest", f"This workflow cannot run: {exc}") from None
    return spec
