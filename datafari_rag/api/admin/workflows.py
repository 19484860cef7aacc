"""Workflows over REST: administrators define them and their API keys; a key (or any signed-in
user) runs one.

- ``GET|POST …/workflows``, ``GET|PUT|DELETE …/workflows/<id>``: administrators; a workflow is
  checked whole on save (its settings must load, its reranker must build) and saved whole.
- ``GET|POST …/workflows/<id>/keys``, ``DELETE …/workflows/<id>/keys/<key id>`` (revokes): the
  key itself is in the creation's answer only.
- ``POST …/workflows/<id>/query``: the body of ``ai/rag`` (and 7.0's ``filters``), the answer of
  ``ai/rag``, by the workflow's pipeline. With ``X-API-Key`` the request acts as the key's user (``api/http/auth.py``);
  whoever asks, every search carries that user's ACL filter, and the workflow's filters only
  narrow it.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from ...config import ConfigError
from ...errors import DatafariError
from ...retrieval.rerank import build_reranker
from ...solr import SolrError
from ...solr.bootstrap import SchemaProblem, ensure_collections
from ...store.users import check_username
from ...workflows.spec import WorkflowSpec, parse_workflow
from ...workflows.store import StoredWorkflow, WorkflowStore
from ..datafari.conversations import bind_answer, conversation_id
from ..datafari.rag import ANSWER, accept_language, run_rag
from ..http.answers import WorkflowAnswer
from ..http.body import json_object
from ..http.context import get_services, live
from ..http.contract import CONVERSATION_REFUSALS, REFUSALS, Param, endpoint, json, refusals
from ..http.errors import ok_content
from ..http.shapes import NewApiKey, WorkflowQuery, rag_request, read
from ..http.store_calls import store_call
from .users import require_admin

bp = Blueprint("workflows", __name__)
WHAT = "Managing workflows"


def _ok(content: dict[str, Any], status: int = 200) -> tuple[Response, int]:
    return ok_content(content), status


def workflow_store() -> WorkflowStore:
    return store_call(get_services().store.workflows)


def _checked(body: dict[str, Any], kept: dict[str, Any] | None = None) -> WorkflowSpec:
    """The workflow of a body, or workflowBadRequest saying why it could not run."""
    services = get_services()
    spec = store_call(parse_workflow, body, services.settings, kept)
    settings = spec.settings(services.settings, indexing=True)  # loads: parse_workflow checked it
    try:
        build_reranker(settings, services.llm)
    except ConfigError as exc:
        raise DatafariError("workflowBadRequest", f"This workflow cannot run: {exc}") from None
    if spec.collection:  # its own collections, made (with its chunker in Solr's processor) if missing
        try:
            ensure_collections(services.solr, settings)
        except (SolrError, SchemaProblem) as exc:
            reason = f"Its collections could not be made: {exc}"
            raise DatafariError("workflowBadRequest", reason, detail=str(exc)) from None
    return spec


def _saved(workflow: StoredWorkflow) -> StoredWorkflow:
    if workflow.spec.default:
        live().changed()  # ai/rag runs it from the next request on, in this worker at once
    return workflow


DONE = json(WorkflowAnswer, "done")


@bp.get("/workflows")
@endpoint("The workflows (administrators)", {200: DONE, **refusals(401, 403, 503)})
def list_workflows() -> tuple[Response, int]:
    require_admin(WHAT)
    return _ok({"workflows": [w.as_dict() for w in store_call(workflow_store().list)]})


@bp.post("/workflows")
@endpoint(
    "Create a workflow, checked whole (administrators)",
    {201: DONE, **refusals(400, 401, 403, 409, 413, 415, 503)},
    WorkflowSpec,
)
def create_workflow() -> tuple[Response, int]:
    require_admin(WHAT)
    spec = _checked(json_object("workflowBadRequest"))
    return _ok({"workflow": _saved(store_call(workflow_store().create, spec)).as_dict()}, 201)


@bp.get("/workflows/<workflow_id>")
@endpoint("One workflow (administrators)", {200: DONE, **refusals(401, 403, 404, 503)})
def read_workflow(workflow_id: str) -> tuple[Response, int]:
    require_admin(WHAT)
    return _ok({"workflow": store_call(workflow_store().get, workflow_id).as_dict()})


@bp.put("/workflows/<workflow_id>")
@endpoint(
    "Replace a workflow, checked whole (administrators)",
    {200: DONE, **refusals(400, 401, 403, 404, 409, 413, 415, 503)},
    WorkflowSpec,
)
def replace_workflow(workflow_id: str) -> tuple[Response, int]:
    require_admin(WHAT)
    store = workflow_store()
    before = store_call(store.get, workflow_id)
    kept = before.spec.ranker.model_dump() if before.spec.ranker else None  # an API key not sent again is kept
    spec = _checked(json_object("workflowBadRequest"), kept)
    after = store_call(store.replace, workflow_id, spec)
    if before.spec.default and not after.spec.default:
        live().changed()
    return _ok({"workflow": _saved(after).as_dict()})


@bp.delete("/workflows/<workflow_id>")
@endpoint("Delete a workflow and its keys (administrators)", {200: DONE, **refusals(401, 403, 404, 503)})
def delete_workflow(workflow_id: str) -> tuple[Response, int]:
    require_admin(WHAT)
    store = workflow_store()
    was_default = store_call(store.get, workflow_id).spec.default
    store_call(store.delete, workflow_id)
    if was_default:
        live().changed()
    return _ok({"deleted": workflow_id})


@bp.get("/workflows/<workflow_id>/keys")
@endpoint(
    "A workflow's API keys, never the keys themselves (administrators)", {200: DONE, **refusals(401, 403, 404, 503)}
)
def list_keys(workflow_id: str) -> tuple[Response, int]:
    require_admin(WHAT)
    return _ok({"keys": store_call(workflow_store().keys, workflow_id)})


@bp.post("/workflows/<workflow_id>/keys")
@endpoint(
    "A new API key, shown once, acting as username (administrators)",
    {201: DONE, **refusals(400, 401, 403, 404, 413, 415, 503)},
    NewApiKey,
)
def create_key(workflow_id: str) -> tuple[Response, int]:
    """A new key: ``name`` (what it is for), ``username`` (whose tokens it reads with; default:
    the administrator creating it). The answer's ``secret`` is the key, shown this once."""
    admin = require_admin(WHAT)
    body = read(NewApiKey, "workflowBadRequest")
    username = store_call(check_username, admin if body.username is None else body.username)
    key, secret = store_call(workflow_store().create_key, workflow_id, body.name, username)
    return _ok({"key": key, "secret": secret}, 201)


@bp.delete("/workflows/<workflow_id>/keys/<key_id>")
@endpoint("Revoke an API key (administrators)", {200: DONE, **refusals(401, 403, 404, 503)})
def revoke_key(workflow_id: str, key_id: str) -> tuple[Response, int]:
    require_admin(WHAT)
    return _ok({"key": store_call(workflow_store().revoke_key, workflow_id, key_id)})


@bp.post("/workflows/<workflow_id>/query")
@endpoint(
    "Run a workflow: ai/rag's body and answer; X-API-Key acts as the key's user",
    {200: ANSWER, **refusals(*REFUSALS, *CONVERSATION_REFUSALS)},
    WorkflowQuery,
    params=(Param("X-API-Key", where="header"),),
)
def query_workflow(workflow_id: str) -> Response:
    workflow = store_call(workflow_store().get, workflow_id)
    body = json_object("ragBadRequest")
    pipeline = live().workflow_pipeline(workflow)
    # Datafari 7.0's filters narrow the workflow's, never widen them (the pipeline's own apply too)
    rag, keep = rag_request(body, pipeline.settings, accept_language(), WorkflowQuery)
    return run_rag(*bind_answer(rag, conversation_id(body, "ragBadRequest"), keep=keep), pipeline)
