"""OAuth 2.0 Protected Resource Metadata (RFC 9728) for ``/mcp``: how an OAuth-capable MCP client
learns, from the 401 it first gets, which authorization server issues the tokens ``/mcp``
accepts and how to send them.

The document lives at ``/.well-known/oauth-protected-resource/mcp`` (the resource's path inserted
after the well-known prefix, RFC 9728 §3.1; the bare prefix serves it too, for clients that look
there), and every 401 of ``/mcp`` names it in ``WWW-Authenticate: Bearer …, resource_metadata=…``
(§5.1). Tokens come from ``security.jwt.issuer`` when one is configured (the identity provider
whose JWTs the sidecar verifies); else, with local sign-in on, from the sidecar itself
(``api/mcp/oauth.py``). The issuer's RFC 8414 metadata gives the client its sign-in.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request

from ..http.answers import ResourceMetadata
from ..http.context import get_services
from ..http.contract import endpoint, json
from .oauth import issuer_of, serves_oauth

bp = Blueprint("resource_metadata", __name__)
WELL_KNOWN = "/.well-known/oauth-protected-resource"
RESOURCE = "/mcp"


def metadata_url(root: str) -> str:
    """The metadata's address for a service whose root URL is ``root`` (``scheme://host[:port]/``)."""
    return root.rstrip("/") + WELL_KNOWN + RESOURCE


def metadata(root: str, issuer: str | None) -> dict[str, Any]:
    document: dict[str, Any] = {
        "resource": root.rstrip("/") + RESOURCE,
        "bearer_methods_supported": ["header"],
        "resource_name": "datafari-rag MCP server",
        "resource_documentation": root.rstrip("/") + "/openapi.json",
    }
    if issuer:
        document["authorization_servers"] = [issuer]
    return document


@bp.get(WELL_KNOWN + RESOURCE)
@bp.get(WELL_KNOWN)
@endpoint(
    "OAuth protected-resource metadata of /mcp (RFC 9728): its authorization server",
    {200: json(ResourceMetadata, "the metadata")},
    public=True,
)
def protected_resource() -> Response:
    settings = get_services().settings
    own = issuer_of(request.url_root) if serves_oauth(settings) else None
    return jsonify(metadata(request.url_root, settings.jwt_issuer or own))
