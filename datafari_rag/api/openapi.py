"""``GET /openapi.json``: the OpenAPI 3.1 description of every endpoint of the sidecar.

Built from the same constants the views validate with (parameter names, limits, languages,
formats, error labels), so the document and the code cannot drift apart; the test suite runs
schemathesis against it (``tests/integration/test_openapi.py``).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify

from ..errors import LABELS
from ..filters import FIELDS as FILTER_FIELDS
from ..prompts import FORMATS, LANGUAGES
from ..registry import RETRIEVAL_MODES, STRATEGIES
from . import search_params, shapes
from .context import get_services
from .validation import MAX_HISTORY, MAX_ID_CHARS, ROLES

bp = Blueprint("openapi", __name__)

JSON = "application/json"
NAME_LIST = r"^\s*([A-Za-z_*][A-Za-z0-9_.]*)(\s*,\s*[A-Za-z_*][A-Za-z0-9_.]*)*\s*$"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _oauth_sign_in() -> dict[str, Any]:
    """The page where a local user signs in for an MCP client (docs/mcp.md): a browser page, whose
    answers are HTML, a right password sending the browser on to the client with a code."""
    html: dict[str, Any] = {"content": {"text/html": {"schema": {}}}}
    token = {"type": "string", "description": "the pending authorization /authorize signed"}
    form = {
        "type": "object",
        "required": ["request"],
        "properties": {
            "request": token,
            "username": {"type": "string"},
            "password": {"type": "string"},
            "decision": {"type": "string", "enum": ["allow", "deny"]},
        },
    }
    return {
        "get": {
            "summary": "The sign-in page of /mcp's OAuth authorization server",
            "security": [],
            "parameters": [{"name": "request", "in": "query", "required": True, "schema": token}],
            "responses": {
                "200": {"description": "the page", **html},
                "400": {"description": "a request that is not valid or has expired", **html},
            },
        },
        "post": {
            "summary": "Signs in (or denies) and sends the browser back to the MCP client",
            "security": [],
            "requestBody": {"required": True, "content": {"application/x-www-form-urlencoded": {"schema": form}}},
            "responses": {
                "302": {"description": "to the client's redirect URI, with a code or access_denied"},
                "400": {"description": "a request that is not valid or has expired", **html},
                "401": {"description": "a wrong username or password: the page again", **html},
                "403": {"description": "posted from another site's page", "content": {JSON: {"schema": _ref("Error")}}},
                "429": {"description": "too many failed sign-ins: the page again", **html},
                "503": {"description": "the user store cannot be reached: the page again", **html},
            },
        },
    }


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    """Refusals with their HTTP status (identity, authority, body size, the update endpoint)."""
    return {str(code): _json(_ref("Error"), "Datafari's error JSON") for code in codes}


REFUSALS = (400, 401, 403, 413, 415, 503)
CONVERSATION_REFUSALS = (404, 409)  # a conversationId that is not the user's; a full conversation


def _ok(content: dict[str, Any]) -> dict[str, Any]:
    """Datafari's success envelope around ``content``'s schema."""
    return {
        "type": "object",
        "properties": {"status": {"const": "OK"}, "content": content},
        "required": ["status", "content"],
    }


def _history(text: str) -> dict[str, Any]:
    """Chat history items: 6.2's ``{role, content}``, 7.0's ``{role, message}``."""
    item = {"role": {"enum": list(ROLES)}, text: {"type": "string"}}
    return {
        "type": "array",
        "maxItems": MAX_HISTORY,
        "items": {"type": "object", "properties": item, "required": ["role", text], "additionalProperties": False},
    }


# what every answer from sources adds (docs/strategies.md)
QUALITY_PROPERTIES: dict[str, Any] = {
    "citations": {"type": "array", "items": {"$ref": "#/components/schemas/Citation"}},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "confidence_basis": {"enum": ["lexical-support", "faithfulness-check", "no-support"]},
    "reasoning_steps": {"type": "array", "items": {"type": "string"}},
}


def _schemas(max_query: int) -> dict[str, Any]:
    document = {
        "type": "object",
        "properties": {k: {"type": "string"} for k in ("id", "title", "url", "content")},
        "required": ["id", "title", "url", "content"],
    }
    lang = {"type": "string", "enum": sorted(LANGUAGES), "description": "ISO 639-1 answer language"}
    question = {"type": "string", "minLength": 1, "maxLength": max_query}
    conversation = {"type": "string", "maxLength": 200, "description": "a conversation kept on the server"}
    doc_id = {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS}
    answer_format = {"type": "string", "enum": ["default", *sorted(FORMATS)]}
    return {
        **shapes.components(),  # the request bodies, from the models the views read them with
        "Ok": _ok(
            {
                "type": "object",
                "properties": {
                    "message": {"type": "string"},
                    "documents": {"type": "array", "items": document},
                    "references": {"type": "array", "items": _ref("Reference")},
                    **QUALITY_PROPERTIES,
                    "usage": _ref("Usage"),
                    "latency_ms": {"type": "integer", "minimum": 0},
                },
                "required": ["message", "documents"],
            }
        ),
        "Error": {
            "type": "object",
            "description": "Datafari's error JSON; the labels are those of datafari_rag/errors.py.",
            "properties": {
                "status": {"const": "ERROR"},
                "content": {
                    "type": "object",
                    "properties": {
                        "message": {"type": "string"},
                        "documents": {"type": "array", "maxItems": 0},
                        "error": {
                            "type": "object",
                            "properties": {
                                "code": {"type": "integer", "minimum": 400, "maximum": 599},
                                "label": {"type": "string", "enum": sorted(LABELS)},
                                "reason": {"type": "string"},
                            },
                            "required": ["code", "label"],
                        },
                    },
                    "required": ["message", "documents", "error"],
                },
            },
            "required": ["status", "content"],
        },
        "Answer": {"oneOf": [_ref("Ok"), _ref("Error")], "description": "HTTP 200 for both, as Datafari answers"},
        "RagRequest": {
            "type": "object",
            "properties": {
                "query": question,
                "id": doc_id,
                "lang": lang,
                "format": answer_format,
                "history": _history("content"),
                "prompt": {**question, "description": "Datafari 6.1: the question the LLM answers; query is searched"},
                "conversationId": conversation,
                "room_id": conversation,
                "search_type": {"enum": ["rag", "gpt", "agentic"], "description": "chat-core's modes"},
            },
            "required": ["query"],
        },
        "SummarizeRequest": {
            "type": "object",
            "properties": {"id": doc_id, "lang": lang},
            "required": ["id"],
        },
        "AiRequest": {
            "type": "object",
            "properties": {
                "query": question,
                "q": question,
                "action": {"enum": ["rag", "summarize", "search", "agentic"]},
                "id": doc_id,
                "lang": lang,
                "format": answer_format,
                "history": _history("message"),
                "filters": {
                    "type": "object",
                    "description": "field -> values; fields: " + ", ".join(FILTER_FIELDS),
                    "additionalProperties": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                },
                "agent": {"type": "string"},
                "conversationId": conversation,
                "room_id": conversation,
                "search_type": {"enum": ["rag", "gpt", "agentic"]},
                "memoryId": {"type": "string"},
            },
        },
        "AiResponse": {
            "type": "object",
            "description": "Datafari 7.0's ApiResponse",
            "properties": {
                "status": {"enum": ["OK", "ERROR"]},
                "content": {
                    "type": "object",
                    "properties": {
                        "message": {"type": ["string", "null"]},
                        "sources": {"type": "array", "items": document},
                        "docs": {"type": "array", "items": document},
                        "conversationId": {"type": "string"},
                        **QUALITY_PROPERTIES,
                        "error": {
                            "type": "object",
                            "properties": {
                                "code": {"type": "string"},
                                "label": {"type": "string"},
                                "message": {"type": "string"},
                                "reason": {"type": ["string", "null"]},
                            },
                            "required": ["code", "label", "message"],
                        },
                    },
                    "required": ["sources"],
                },
            },
            "required": ["status", "content"],
        },
        "V1Ok": {
            "type": "object",
            "properties": {"status": {"const": "OK"}, "content": {"type": "object"}},
            "required": ["status", "content"],
        },
        "V1Error": {
            "type": "object",
            "properties": {
                "status": {"const": "ERROR"},
                "content": {
                    "type": "object",
                    "properties": {"code": {"type": "integer"}, "reason": {"type": "string"}},
                    "required": ["code", "reason"],
                },
            },
            "required": ["status", "content"],
        },
        "Suggestions": {
            "type": "object",
            "properties": {
                "spellcheck": {
                    "type": "object",
                    "properties": {"collations": {"type": "array"}, "suggestions": {"type": "array"}},
                    "required": ["collations"],
                }
            },
            "required": ["spellcheck"],
        },
        "SolrResults": {
            "type": "object",
            "description": "Solr's JSON response, without echoed parameters",
            "properties": {
                "responseHeader": {"type": "object"},
                "response": {
                    "type": "object",
                    "properties": {
                        "numFound": {"type": "integer"},
                        "start": {"type": "integer"},
                        "docs": {"type": "array", "items": {"type": "object"}},
                    },
                    "required": ["numFound", "docs"],
                },
            },
            "required": ["response"],
        },
        "UpdateResult": {
            "type": "object",
            "properties": {
                "responseHeader": {"type": "object", "properties": {"status": {"type": "integer"}}},
                "added": {"type": "integer"},
                "failed": {"type": "integer"},
                "deleted": {"type": "integer"},
                "results": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": ["string", "null"]},
                            "status": {"enum": ["ok", "error"]},
                            "chunks": {"type": "integer"},
                            "error": {"type": "string"},
                            "code": {"enum": [400, 503]},
                        },
                        "required": ["status"],
                    },
                },
            },
            "required": ["added", "failed", "deleted", "results"],
        },
        "Reference": {
            "type": "object",
            "description": "a source the answer cites, by its number in the prompt",
            "properties": {
                "number": {"type": "integer", "minimum": 1},
                **{k: {"type": "string"} for k in ("id", "title", "url")},
            },
            "required": ["number", "id", "title", "url"],
        },
        "Citation": {
            "type": "object",
            "description": "a cited source with the sentence of it closest to the answer and its retrieval score",
            "properties": {
                "number": {"type": "integer", "minimum": 1},
                **{k: {"type": "string"} for k in ("id", "title", "url", "excerpt")},
                "score": {"type": "number"},
            },
            "required": ["number", "id", "title", "url", "excerpt", "score"],
        },
        "UserAnswer": _ok(
            {
                "type": "object",
                "description": "a token (sign-in), a user, the users, or what was deleted; never a password",
                "properties": {
                    "token": {"type": "string"},
                    "token_type": {"const": "Bearer"},
                    "expires_in": {"type": "integer"},
                    "user": {"type": "object"},
                    "users": {"type": "array", "items": {"type": "object"}},
                    "deleted": {"type": "string"},
                },
            }
        ),
        "Workflow": {
            "type": "object",
            "description": "a workflow: its retrieval, strategy, prompt and stages (docs/workflows.md)",
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 100},
                "description": {"type": "string", "maxLength": 500},
                "retrieval": {"enum": list(RETRIEVAL_MODES.names), "description": RETRIEVAL_MODES.help()},
                "strategy": {"enum": list(STRATEGIES.names), "description": STRATEGIES.help()},
                "parentChild": {"type": "boolean"},
                "instructions": {"type": "string", "maxLength": 4000},
                "chunker": {"type": "object"},
                "queryEnhancers": {"type": "array", "items": {"type": "object"}},
                "filters": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
                "ranker": {"oneOf": [{"type": "null"}, {"type": "object"}]},
                "default": {"type": "boolean"},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        "NewApiKey": {
            "type": "object",
            "properties": {"name": {"type": "string", "maxLength": 100}, "username": {"type": "string"}},
            "additionalProperties": False,
        },
        "WorkflowAnswer": _ok(
            {
                "type": "object",
                "description": "a workflow, the workflows, a key (its secret at creation only), the keys, or what "
                "was deleted",
                "properties": {
                    "workflow": {"type": "object"},
                    "workflows": {"type": "array", "items": {"type": "object"}},
                    "key": {"type": "object"},
                    "secret": {"type": "string"},
                    "keys": {"type": "array", "items": {"type": "object"}},
                    "deleted": {"type": "string"},
                },
            }
        ),
        "WorkflowQuery": {
            "type": "object",
            "properties": {"filters": {"type": "object"}},
            "allOf": [_ref("RagRequest")],
        },
        "IndexJobAnswer": _ok(
            {
                "type": "object",
                "properties": {
                    "job": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "status": {"enum": ["running", "done", "failed"]},
                            "percent": {"type": "number"},
                            "documents": {"type": "integer"},
                            "total": {"type": "integer"},
                            "chunks": {"type": ["integer", "null"]},
                            "failed": {"type": "integer"},
                            "errors": {"type": "array", "items": {"type": "string"}},
                        },
                    },
                    "links": {"type": "object"},
                },
            }
        ),
        "SettingsAnswer": _ok(
            {
                "type": "object",
                "description": "every key: section, help, default, value (a secret: only whether it is set), "
                "overridden, live",
                "properties": {"settings": {"type": "array", "items": {"type": "object"}}},
            }
        ),
        "Usage": {
            "type": "object",
            "description": "tokens of every LLM call of the answer (rewriting, map/refine, final)",
            "properties": {
                **{
                    k: {"type": "integer", "minimum": 0} for k in ("prompt_tokens", "completion_tokens", "total_tokens")
                },
                "estimated": {"type": "boolean"},
            },
        },
        "UsageAnswer": _ok(
            {
                "type": "object",
                "properties": {
                    "usage": {"type": "array", "items": {"type": "object"}},
                    "totals": {"type": "object"},
                },
                "required": ["usage", "totals"],
            }
        ),
        "Conversation": {
            "type": "object",
            "properties": {k: {"type": "string"} for k in ("id", "title", "created_at", "last_refresh")},
            "required": ["id", "title", "created_at", "last_refresh"],
        },
        "Block": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "position": {"type": "integer"},
                "question": {"type": "string"},
                "answer": {"type": "string"},
                "status": {"enum": ["done", "error", "idle"]},
                "search_type": {"type": "string"},
                "rewritten_queries": {"type": "array", "items": {"type": "string"}},
                "sources": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {k: {"type": "string"} for k in ("id", "title", "url")},
                    },
                },
                "usage": {"type": "object"},
                "error_label": {"type": ["string", "null"]},
                "latency_ms": {"type": ["integer", "null"]},
                "created_at": {"type": "string"},
            },
            "required": ["id", "position", "question", "answer", "status", "sources"],
        },
        "ConversationAnswer": _ok(
            {
                "type": "object",
                "properties": {
                    "conversations": {"type": "array", "items": _ref("Conversation")},
                    "conversation": {
                        "allOf": [_ref("Conversation")],
                        "properties": {"blocks": {"type": "array", "items": _ref("Block")}},
                    },
                    "deleted": {"type": "string"},
                },
            }
        ),
        "Health": {
            "type": "object",
            "properties": {
                "status": {"enum": ["UP", "DOWN"]},
                "solr": {"type": "object"},
                "agent": {"type": "object"},
                "store": {"type": "object"},
                "checkedSecondsAgo": {"type": "number"},
                "failedChecksInARow": {"type": "integer"},
            },
            "required": ["status"],
        },
    }


def _query(name: str, schema: dict[str, Any], description: str = "", required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "schema": schema, "description": description}


def _select_parameters() -> list[dict[str, Any]]:
    params = [
        _query("q", {"type": "string", "minLength": 1}, "the query (edismax); with action=rag, the question", True),
        _query("q.op", {"enum": ["AND", "OR"]}),
        _query("start", {"type": "integer", "minimum": 0, "maximum": 10_000}),
        _query("rows", {"type": "integer", "minimum": 0, "maximum": 1000}),
        _query("sort", {"type": "string", "pattern": r"^\s*[A-Za-z_][A-Za-z0-9_]*\s+(asc|desc)\s*$"}),
        _query("fl", {"type": "string", "pattern": NAME_LIST}),
        _query("action", {"enum": ["rag"]}, "rag: Datafari's deprecated RAG path"),
        _query("format", {"enum": ["default", *sorted(FORMATS)]}),
        _query("lang", {"enum": sorted(LANGUAGES)}),
        _query("id", {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS}),
        _query("wt", {"enum": ["json"]}),
        _query("prompt", {"type": "string", "minLength": 1}, "with action=rag (6.1): the question the LLM answers"),
    ]
    text = {"type": "string", "minLength": 1}
    for name in search_params.REPEATABLE:  # DatafariUI's facets and filters (docs/search-api.md)
        param = _query(name, {"type": "array", "items": text}, "repeatable; local params: tag, ex, key only")
        params.append({**param, "style": "form", "explode": True})
    params += [_query(name, {"type": "string"}) for name in search_params.OPTIONS]
    params += [_query(name, {"type": "string"}) for name in search_params.GLOBAL]
    return params


def _suggest_parameters() -> list[dict[str, Any]]:
    return [
        _query("q", {"type": "string", "maxLength": 200}, "what was typed; its last word is a prefix"),
        _query("rows", {"type": "integer", "minimum": 1, "maximum": 10}),
        _query("action", {"enum": ["suggest"]}),
        _query("autocomplete", {"enum": ["true", "false"]}),
        _query("spellcheck.collateParam.q.op", {"enum": ["AND", "OR"]}),
        _query("aggregator", {"type": "string"}),
    ]


def _v1(summary: str, *errors: int) -> dict[str, Any]:
    """A Datafari v1.0 endpoint: ``{"status": "OK", "content": …}``, or its error with that status."""
    responses = {"200": _json(_ref("V1Ok"), "Datafari's v1.0 answer")}
    responses |= {str(code): _json(_ref("V1Error"), "Datafari's v1.0 error") for code in errors}
    return {"get": {"summary": summary, "responses": responses}}


def _vector_parameters() -> list[dict[str, Any]]:
    params = [
        _query("queryrag", {"type": "string", "minLength": 1}, "the text to embed", True),
        _query("q", {"type": "string"}, "an alias of queryrag"),
        _query("topK", {"type": "integer", "minimum": 1, "maximum": 1000}),
        _query("rows", {"type": "integer", "minimum": 1, "maximum": 1000}),
        _query("model", {"type": "string", "pattern": r"^[A-Za-z0-9_\-]{1,100}$"}),
        _query("fl", {"type": "string", "pattern": NAME_LIST}),
        _query("wt", {"enum": ["json"]}),
    ]
    return params


def document(prefix: str, max_query: int) -> dict[str, Any]:
    """The OpenAPI 3.1 document of an app serving its API under ``prefix``."""
    answer = _json(_ref("Answer"), "the answer, or Datafari's error JSON (HTTP 200 for both)")
    v1 = prefix.removesuffix("/v2.0") + "/v1.0"
    rag_body = {"required": True, "content": {JSON: {"schema": _ref("RagRequest")}}}
    update = {
        "post": {
            "summary": "Index documents: Solr's JSON update syntax; parents to FileShare, chunks to VectorMain",
            "requestBody": {
                "required": True,
                "content": {JSON: {"schema": {"oneOf": [{"type": "array", "items": {}}, {"type": "object"}]}}},
            },
            "parameters": [_query("commit", {"enum": ["true", "false"]}), _query("commitWithin", {"type": "integer"})],
            "responses": {
                **_errors(*REFUSALS, 500),
                "200": _json(_ref("UpdateResult"), "every document written whole: one result per document"),
                # refused documents (400) or a service failing for some (503): the results say which
                **{
                    str(code): _json({"oneOf": [_ref("UpdateResult"), _ref("Error")]}, "per document, or a refusal")
                    for code in (400, 503)
                },
            },
        }
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "datafari-rag",
            "version": "1",
            "description": "Retrieval-augmented answers over Solr with document-level security; Datafari's RagAPI.",
        },
        "paths": {
            **{
                path: {
                    "get": {
                        "summary": summary,
                        "security": [],
                        "responses": {
                            "200": _json(_ref("Health"), "every part is up"),
                            "503": _json(_ref("Health"), "a part is down"),
                        },
                    }
                }
                for path, summary in (
                    ("/health", "Readiness (as /health/ready): the last background check of every part"),
                    (
                        "/health/ready",
                        "Solr, both collections, the model store, the agent and the relational store, "
                        "checked in the background",
                    ),
                )
            },
            "/metrics": {
                "get": {
                    "summary": "Prometheus metrics of every worker: requests, latency, errors per label, "
                    "the circuit, answer slots, LLM calls and tokens, embedding calls, indexing jobs",
                    "security": [],
                    "responses": {
                        "200": {
                            "description": "Prometheus' text format",
                            "content": {"text/plain": {"schema": {"type": "string"}}},
                        },
                        "404": {
                            "description": "metrics.enabled is false",
                            "content": {"text/plain": {"schema": {"type": "string"}}},
                        },
                    },
                }
            },
            "/health/live": {
                "get": {
                    "summary": "The process answers (nothing else is looked at)",
                    "security": [],
                    "responses": {"200": _json({"type": "object", "required": ["status"]}, "the process is up")},
                }
            },
            **{
                path: {
                    "get": {
                        "summary": "OAuth protected-resource metadata of /mcp (RFC 9728): its authorization server",
                        "security": [],
                        "responses": {"200": _json({"type": "object", "required": ["resource"]}, "the metadata")},
                    }
                }
                for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp")
            },
            "/oauth/sign-in": _oauth_sign_in(),
            "/ui/": {
                "get": {
                    "summary": "The web UI (docs/ui.md)",
                    "security": [],
                    "responses": {"200": {"description": "the page", "content": {"text/html": {"schema": {}}}}},
                }
            },
            "/ui/static/{name}": {
                "get": {
                    "summary": "A file of the web UI",
                    "security": [],
                    "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
                    "responses": {
                        "200": {
                            "description": "the file",
                            "content": {m: {"schema": {}} for m in ("text/javascript", "text/css", "text/html")},
                        },
                        "404": {"description": "no such file", "content": {JSON: {"schema": _ref("Error")}}},
                    },
                }
            },
            "/openapi.json": {
                "get": {"summary": "This document", "responses": {"200": _json({"type": "object"}, "OpenAPI 3.1")}}
            },
            f"{prefix}/ai/rag": {
                "post": {
                    "summary": "An answer from the index (with id: from that one document)",
                    "requestBody": rag_body,
                    "responses": {"200": answer, **_errors(*REFUSALS, *CONVERSATION_REFUSALS)},
                }
            },
            f"{prefix}/ai": {
                "post": {
                    "summary": "Datafari 7.0's AI API: rag, summarize, search, agentic",
                    "requestBody": {"required": True, "content": {JSON: {"schema": _ref("AiRequest")}}},
                    "responses": {
                        code: _json(_ref("AiResponse"), "7.0's ApiResponse")
                        for code in ("200", "400", "404", "409", "500")
                    }
                    | {  # refused before the view (Datafari's error JSON) or by it (7.0's ApiResponse)
                        code: _json({"oneOf": [_ref("AiResponse"), _ref("Error")]}, "a refusal")
                        for code in ("401", "403", "503")
                    }
                    | _errors(413, 415),
                }
            },
            f"{prefix}/ai/summarize": {
                "post": {
                    "summary": "A summary of one document",
                    "requestBody": {"required": True, "content": {JSON: {"schema": _ref("SummarizeRequest")}}},
                    "responses": {"200": answer, **_errors(*REFUSALS)},
                }
            },
            f"{prefix}/ai/stream": {
                "post": {
                    "summary": "The answer as it is generated: NDJSON, or SSE with Accept: text/event-stream",
                    "requestBody": rag_body,
                    "responses": {
                        "200": {
                            "description": "the events; a request refused before they start: Datafari's error JSON",
                            "content": {
                                "application/x-ndjson": {"schema": {"type": "string"}},
                                "text/event-stream": {"schema": {"type": "string"}},
                                JSON: {"schema": _ref("Error")},
                            },
                        },
                        **_errors(*REFUSALS, *CONVERSATION_REFUSALS),
                    },
                }
            },
            f"{prefix}/search/select": {
                "get": {
                    "summary": "Search FileShare (BM25) with the user's access; with action=rag, an answer",
                    "parameters": _select_parameters(),
                    "responses": {
                        "200": _json(
                            {"oneOf": [_ref("SolrResults"), _ref("Ok"), _ref("Error")]},
                            "Solr's results, or (action=rag) the answer, or Datafari's error JSON",
                        ),
                        **_errors(*REFUSALS),
                    },
                }
            },
            f"{prefix}/search/vector": {
                "get": {
                    "summary": "kNN over VectorMain's chunks with the user's access and the parent check",
                    "parameters": _vector_parameters(),
                    "responses": {
                        "200": _json({"oneOf": [_ref("SolrResults"), _ref("Error")]}, "Solr's results or an error"),
                        **_errors(*REFUSALS),
                    },
                }
            },
            f"{prefix}/search/suggest": {
                "get": {
                    "summary": "DatafariUI's autocomplete: titles of readable documents matching what was typed",
                    "parameters": _suggest_parameters(),
                    "responses": {
                        "200": _json({"oneOf": [_ref("Suggestions"), _ref("Error")]}, "collations, or an error"),
                        **_errors(*REFUSALS),
                    },
                }
            },
            f"{v1}/users/current": _v1("The user the request's identity names", 404),
            f"{v1}/licence": _v1("No licence limits: every limit is valid"),
            f"{v1}/status/features/favorites": _v1("Favorites are not offered", 401),
            f"{v1}/emails/admin": _v1("No administrator e-mail address is configured"),
            f"{v1}/aggregator": _v1("No federated search: an empty aggregator list"),
            f"{prefix}/conversations": {
                "get": {
                    "summary": "My conversations, the most recently used first",
                    "responses": {"200": _json(_ref("ConversationAnswer"), "the list"), **_errors(401, 403, 503)},
                },
                "post": {
                    "summary": "Start a conversation (its id goes in conversationId of ai/rag, ai/stream, ai)",
                    "requestBody": {"content": {JSON: {"schema": _ref("NewConversation")}}},
                    "responses": {
                        "201": _json(_ref("ConversationAnswer"), "the new conversation"),
                        **_errors(400, 401, 403, 409, 413, 415, 503),
                    },
                },
            },
            f"{prefix}/usage": {
                "get": {
                    "summary": "Token statistics per day, conversation and model: mine; an administrator's: anyone's",
                    "parameters": [
                        _query("room", {"type": "string"}, "one conversation's statistics"),
                        _query("user", {"type": "string"}, "administrators: that user's statistics"),
                    ],
                    "responses": {"200": _json(_ref("UsageAnswer"), "the rows and their totals"), **_errors(*REFUSALS)},
                }
            },
            f"{prefix}/conversations/{{conversation_id}}": {
                verb: {
                    "summary": summary,
                    "parameters": [
                        {"name": "conversation_id", "in": "path", "required": True, "schema": {"type": "string"}}
                    ],
                    **(
                        {"requestBody": {"required": True, "content": {JSON: {"schema": _ref("ConversationTitle")}}}}
                        if verb in ("patch", "put")
                        else {}
                    ),
                    "responses": {
                        "200": _json(_ref("ConversationAnswer"), "the conversation"),
                        **_errors(400, 401, 403, 404, 413, 415, 503),
                    },
                }
                for verb, summary in (
                    ("get", "One of my conversations, its turns and the sources I may still read"),
                    ("patch", "Rename one of my conversations"),
                    ("put", "Rename one of my conversations"),
                    ("delete", "Delete one of my conversations and its turns"),
                )
            },
            f"{prefix}/auth/login": {
                "post": {
                    "summary": "Sign in with a local account: a Bearer token for every other endpoint",
                    "security": [],
                    "requestBody": {"required": True, "content": {JSON: {"schema": _ref("Login")}}},
                    "responses": {
                        "200": _json(_ref("UserAnswer"), "the token"),
                        **_errors(400, 401, 413, 415, 422, 429, 503),
                    },
                }
            },
            f"{prefix}/users": {
                "get": {
                    "summary": "Local users (administrators)",
                    "responses": {"200": _json(_ref("UserAnswer"), "the users"), **_errors(401, 403, 503)},
                },
                "post": {
                    "summary": "Create a local user (administrators)",
                    "requestBody": {"required": True, "content": {JSON: {"schema": _ref("NewUser")}}},
                    "responses": {
                        "201": _json(_ref("UserAnswer"), "the user"),
                        **_errors(400, 401, 403, 409, 413, 415, 503),
                    },
                },
            },
            f"{prefix}/users/{{username}}": {
                verb: {
                    "summary": summary,
                    "parameters": [{"name": "username", "in": "path", "required": True, "schema": {"type": "string"}}],
                    **(
                        {"requestBody": {"required": True, "content": {JSON: {"schema": _ref("UserChange")}}}}
                        if verb == "put"
                        else {}
                    ),
                    "responses": {
                        "200": _json(_ref("UserAnswer"), "done"),
                        **_errors(400, 401, 403, 404, 413, 415, 503),
                    },
                }
                for verb, summary in (
                    ("put", "Change a local user's password or role (administrators)"),
                    ("delete", "Delete a local user (administrators)"),
                )
            },
            **_workflow_paths(prefix, answer),
            "/update": update,
            f"{prefix}/update": update,
        },
        "components": {"schemas": _schemas(max_query)},
    }


def _workflow_paths(prefix: str, answer: dict[str, Any]) -> dict[str, Any]:
    """Workflows, their keys, and the run-time settings (administrators), running a workflow, and
    indexing jobs."""
    done = _json(_ref("WorkflowAnswer"), "done")
    wf = {"name": "workflow_id", "in": "path", "required": True, "schema": {"type": "string"}}
    job = {"name": "job_id", "in": "path", "required": True, "schema": {"type": "string"}}
    body = {"required": True, "content": {JSON: {"schema": _ref("Workflow")}}}
    return {
        f"{prefix}/workflows": {
            "get": {"summary": "The workflows (administrators)", "responses": {"200": done, **_errors(401, 403, 503)}},
            "post": {
                "summary": "Create a workflow, checked whole (administrators)",
                "requestBody": body,
                "responses": {"201": done, **_errors(400, 401, 403, 409, 413, 415, 503)},
            },
        },
        f"{prefix}/workflows/{{workflow_id}}": {
            "get": {
                "summary": "One workflow (administrators)",
                "parameters": [wf],
                "responses": {"200": done, **_errors(401, 403, 404, 503)},
            },
            "put": {
                "summary": "Replace a workflow, checked whole (administrators)",
                "parameters": [wf],
                "requestBody": body,
                "responses": {"200": done, **_errors(400, 401, 403, 404, 409, 413, 415, 503)},
            },
            "delete": {
                "summary": "Delete a workflow and its keys (administrators)",
                "parameters": [wf],
                "responses": {"200": done, **_errors(401, 403, 404, 503)},
            },
        },
        f"{prefix}/workflows/{{workflow_id}}/keys": {
            "get": {
                "summary": "A workflow's API keys, never the keys themselves (administrators)",
                "parameters": [wf],
                "responses": {"200": done, **_errors(401, 403, 404, 503)},
            },
            "post": {
                "summary": "A new API key, shown once, acting as username (administrators)",
                "parameters": [wf],
                "requestBody": {"required": True, "content": {JSON: {"schema": _ref("NewApiKey")}}},
                "responses": {"201": done, **_errors(400, 401, 403, 404, 413, 415, 503)},
            },
        },
        f"{prefix}/workflows/{{workflow_id}}/keys/{{key_id}}": {
            "delete": {
                "summary": "Revoke an API key (administrators)",
                "parameters": [wf, {"name": "key_id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {"200": done, **_errors(401, 403, 404, 503)},
            }
        },
        f"{prefix}/workflows/{{workflow_id}}/query": {
            "post": {
                "summary": "Run a workflow: ai/rag's body and answer; X-API-Key acts as the key's user",
                "parameters": [wf, {"name": "X-API-Key", "in": "header", "schema": {"type": "string"}}],
                "requestBody": {"required": True, "content": {JSON: {"schema": _ref("WorkflowQuery")}}},
                "responses": {"200": answer, **_errors(*REFUSALS, *CONVERSATION_REFUSALS)},
            }
        },
        f"{prefix}/index/jobs": {
            "post": {
                "summary": "Index documents (JSON) or files (multipart) in the background; 202 with the job",
                "requestBody": {
                    "required": True,
                    "content": {
                        JSON: {"schema": _ref("IndexJobRequest")},
                        "multipart/form-data": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
                                    "fields": {"type": "string", "description": "JSON added to each file's document"},
                                    "workflow": {"type": "string"},
                                    "callback": {"type": "string"},
                                },
                            }
                        },
                    },
                },
                "responses": {
                    "202": _json(_ref("IndexJobAnswer"), "the job"),
                    **_errors(400, 401, 403, 404, 413, 415, 503),
                },
            }
        },
        f"{prefix}/index/jobs/{{job_id}}": {
            "get": {
                "summary": "A job's progress: percent, documents, chunks, failures, errors",
                "parameters": [job],
                "responses": {"200": _json(_ref("IndexJobAnswer"), "the job"), **_errors(401, 403, 404, 503)},
            }
        },
        f"{prefix}/index/jobs/{{job_id}}/events": {
            "get": {
                "summary": "A job's progress as Server-Sent Events (progress, then done)",
                "parameters": [job],
                "responses": {
                    "200": {
                        "description": "the events",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}},
                    },
                    **_errors(401, 403, 404, 503),
                },
            }
        },
        f"{prefix}/admin/settings": {
            "get": {
                "summary": "Every rag.properties key and its value now; secrets never shown (administrators)",
                "responses": {"200": _json(_ref("SettingsAnswer"), "the settings"), **_errors(401, 403, 503)},
            },
            "put": {
                "summary": "Change run-time keys, checked whole, applied without restart (administrators)",
                "requestBody": {"required": True, "content": {JSON: {"schema": _ref("SettingsChange")}}},
                "responses": {
                    "200": _json(_ref("SettingsAnswer"), "the settings"),
                    **_errors(400, 401, 403, 413, 415, 503),
                },
            },
        },
    }


@bp.get("/openapi.json")
def openapi() -> Response:
    settings = get_services().settings
    return jsonify(document(settings.api_prefix.rstrip("/"), settings.query_max_length))
