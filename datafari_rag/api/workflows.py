"""Workflows over REST: administrators define them and their API keys; a key (or any signed-in
user) runs one.

- ``GET|POST …/workflows``, ``GET|PUT|DELETE …/workflows/<id>``: administrators; a workflow is
  checked whole on save (its settings must load, its reranker must build) and saved whole.
- ``GET|POST …/workflows/<id>/keys``, ``DELETE …/workflows/<id>/keys/<key id>`` (revokes): the
  key itself is in the creation's answer only.
- ``POST …/workflows/<id>/query``: the body of ``ai/rag`` (and 7.0's ``filters``), the answer of
  ``ai/rag``, by the workflow's pipeline. With ``X-API-Key`` the request acts as the key's user (``api/auth.py``);
  whoever asks, every search carries that user's ACL filter, and the workflow's filters only
  narrow it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flask import Blueprint, Response

from ..config import ConfigError
from ..errors import DatafariError
from ..filters import source_filter
from ..retrieval.rerank import build_reranker
from ..solr import SolrError
from ..solr.bootstrap import SchemaProblem, ensure_collections
from ..store.users import check_username
from ..workflows.spec import WorkflowSpec, parse_workflow
from ..workflows.store import StoredWorkflow, WorkflowStore
from .body import json_object
from .context import get_services, live
from .conversations import bind_answer, conversation_id
from .errors import ok_content
from .rag import accept_language, run_rag
from .store_calls import store_call
from .users import require_admin
from .validation import rag_request

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


@bp.get("/workflows")
def list_workflows() -> tuple[Response, int]:
    require_admin(WHAT)
    return _ok({"workflows": [w.as_dict() for w in store_call(workflow_store().list)]})


@bp.post("/workflows")
def create_workflow() -> tuple[Response, int]:
    require_admin(WHAT)
    spec = _checked(json_object("workflowBadRequest"))
    return _ok({"workflow": _saved(store_call(workflow_store().create, spec)).as_dict()}, 201)


@bp.get("/workflows/<workflow_id>")
def read_workflow(workflow_id: str) -> tuple[Response, int]:
    require_admin(WHAT)
    return _ok({"workflow": store_call(workflow_store().get, workflow_id).as_dict()})


@bp.put("/workflows/<workflow_id>")
def replace_workflow(workflow_id: str) -> tuple[Response, int]:
    require_admin(WHAT)
    store = workflow_store()
    before = store_call(store.get, workflow_id)
    kept = before.spec.ranker[2] if before.spec.ranker else None  # an API key not sent again is kept
    spec = _checked(json_object("workflowBadRequest"), kept)
    after = store_call(store.replace, workflow_id, spec)
    if before.spec.default and not after.spec.default:
        live().changed()
    return _ok({"workflow": _saved(after).as_dict()})


@bp.delete("/workflows/<workflow_id>")
def delete_workflow(workflow_id: str) -> tuple[Response, int]:
    require_admin(WHAT)
    store = workflow_store()
    was_default = store_call(store.get, workflow_id).spec.default
    store_call(store.delete, workflow_id)
    if was_default:
        live().changed()
    return _ok({"deleted": workflow_id})


@bp.get("/workflows/<workflow_id>/keys")
def list_keys(workflow_id: str) -> tuple[Response, int]:
    require_admin(WHAT)
    return _ok({"keys": store_call(workflow_store().keys, workflow_id)})


@bp.post("/workflows/<workflow_id>/keys")
def create_key(workflow_id: str) -> tuple[Response, int]:
    """A new key: ``name`` (what it is for), ``username`` (whose tokens it reads with; default:
    the administrator creating it). The answer's ``secret`` is the key, shown this once."""
    admin = require_admin(WHAT)
    body = json_object("workflowBadRequest")
    unknown = sorted(set(body) - {"name", "username"})
    if unknown:
        raise DatafariError("workflowBadRequest", f"Unknown field(s): {', '.join(unknown)}.")
    name = body.get("name", "")
    if not isinstance(name, str) or len(name) > 100:
        raise DatafariError("workflowBadRequest", "'name' is a string of at most 100 characters.")
    username = store_call(check_username, body.get("username", admin))
    key, secret = store_call(workflow_store().create_key, workflow_id, name, username)
    return _ok({"key": key, "secret": secret}, 201)


@bp.delete("/workflows/<workflow_id>/keys/<key_id>")
def revoke_key(workflow_id: str, key_id: str) -> tuple[Response, int]:
    require_admin(WHAT)
    return _ok({"key": store_call(workflow_store().revoke_key, workflow_id, key_id)})


@bp.post("/workflows/<workflow_id>/query")
def query_workflow(workflow_id: str) -> Response:
    workflow = store_call(workflow_store().get, workflow_id)
    body = json_object("ragBadRequest")
    services = get_services()
    rag = rag_request(body, services.settings.query_max_length, accept_language())
    try:  # Datafari 7.0's filters: they narrow the workflow's, never widen them
        rag = replace(rag, filters=source_filter(body.get("filters")))
    except ValueError as exc:
        raise DatafariError("ragBadRequest", str(exc)) from None
    return run_rag(*bind_answer(rag, conversation_id(body, "ragBadRequest")), live().workflow_pipeline(workflow))
