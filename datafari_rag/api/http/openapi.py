"""``GET /openapi.json``: the OpenAPI 3.1 description of every endpoint of the sidecar.

Nothing here is written by hand: the paths are Flask's routes, each operation is the contract its
view declares (``api/http/contract.py``), and the schemas are generated from the models the views read
their bodies with (``shapes.py``) and the answers they build (``answers.py``). A route without a
contract fails ``tests/test_contract.py``; schemathesis runs against the document on the real app
(``tests/integration/test_openapi.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify
from pydantic import TypeAdapter
from werkzeug.routing import Rule

from .context import get_services
from .contract import Contract, Reply, contract_of, endpoint, json
from .shapes import MAX_QUERY

bp = Blueprint("openapi", __name__)

METHODS = ("get", "post", "put", "patch", "delete")
REF = "#/components/schemas/{model}"


def operations(app: Flask) -> Iterable[tuple[Rule, str, Contract | None]]:
    """Every route and method of ``app`` with its view's contract (None: the view declares none)."""
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        view = app.view_functions[rule.endpoint]
        for method in sorted(m.lower() for m in rule.methods or () if m.lower() in METHODS):
            yield rule, method, contract_of(view)


def document(app: Flask, max_query: int) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``app``; ``max_query``: the configured longest query."""
    models = Models()
    paths: dict[str, dict[str, Any]] = {}
    for rule, method, contract in operations(app):
        if contract is None:
            raise LookupError(f"{rule.rule} ({method}) declares no contract (api/http/contract.py endpoint)")
        path = rule.rule.replace("<", "{").replace(">", "}")
        paths.setdefault(path, {})[method] = _operation(rule, contract, models)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "datafari-rag",
            "version": "1",
            "description": "Retrieval-augmented answers over Solr with document-level security; Datafari's RagAPI.",
        },
        "paths": paths,
        "components": {"schemas": _configured(models.schemas(), {MAX_QUERY: max_query})},
    }


def _operation(rule: Rule, contract: Contract, models: Models) -> dict[str, Any]:
    path_params = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}} for name in sorted(rule.arguments)
    ]
    operation: dict[str, Any] = {"summary": contract.summary}
    if contract.public:
        operation["security"] = []
    params = path_params + [p.openapi() for p in contract.params]
    if params:
        operation["parameters"] = params
    if contract.body is not None:
        content = {media: {"schema": models.schema(s)} for media, s in contract.body.items()}
        operation["requestBody"] = {"required": contract.body_required, "content": content}
    operation["responses"] = {str(code): _reply(reply, models) for code, reply in sorted(contract.replies.items())}
    return operation


def _reply(reply: Reply, models: Models) -> dict[str, Any]:
    answer: dict[str, Any] = {"description": reply.description}
    if reply.content:
        answer["content"] = {media: {"schema": models.schema(s)} for media, s in reply.content.items()}
    return answer


class Models:
    """The model classes an operation names, each becoming a component and a $ref to it."""

    def __init__(self) -> None:
        self.used: dict[str, Any] = {}

    def schema(self, schema: Any) -> Any:
        if isinstance(schema, type):
            self.used[schema.__name__] = schema
            return {"$ref": REF.format(model=schema.__name__)}
        if isinstance(schema, dict):
            return {k: self.schema(v) for k, v in schema.items()}
        if isinstance(schema, list):
            return [self.schema(v) for v in schema]
        return schema

    def schemas(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name, model in sorted(self.used.items()):
            schema = TypeAdapter(model).json_schema(ref_template=REF)
            found.update(schema.pop("$defs", {}))
            found[name] = schema
        return {name: _plain(schema) for name, schema in sorted(found.items())}


def _plain(schema: Any) -> Any:
    """The schema without pydantic's ``title`` annotations (a property named ``title`` stays) and
    ``default: null`` (an absent field)."""
    if isinstance(schema, dict):
        return {
            k: _plain(v)
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str)) and not (k == "default" and v is None)
        }
    if isinstance(schema, list):
        return [_plain(v) for v in schema]
    return schema


def _configured(schema: Any, values: dict[str, int]) -> Any:
    """The schema with each configured value's placeholder (``shapes.MAX_QUERY``) replaced."""
    if isinstance(schema, dict):
        return {k: _configured(v, values) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_configured(v, values) for v in schema]
    return values.get(schema, schema) if isinstance(schema, str) else schema


@bp.get("/openapi.json")
@endpoint("This document", {200: json({"type": "object"}, "OpenAPI 3.1")}, public=True)
def openapi() -> Response:
    settings = get_services().settings
    return jsonify(document(current_app._get_current_object(), settings.query_max_length))  # type: ignore[attr-defined]
