"""``GET /Datafari/URL?id=…``: where a search result's title leads (its ``click_url``).

Datafari serves every result through this address so that opening a document is a request of the
user's: here the document is looked up by id (or by url) with the user's access filter, as every
read is. A document the user may read is opened: its http(s) address by a redirect, any other
(``upload://``, ``file://``) as the text the index stores. A document that does not exist and one
the user may not read get the same 404, so an id reveals nothing.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from flask import Blueprint, Response, redirect, request
from werkzeug.wrappers import Response as WerkzeugResponse

from ..errors import DatafariError
from ..solr import SolrError
from .auth import current_access
from .context import get_services
from .contract import Param, Reply, endpoint, refusals
from .validation import MAX_ID_CHARS

bp = Blueprint("document_link", __name__)

WEB = ("http://", "https://")
KEY = {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS}


def datafari_base() -> str:
    """Datafari's web application's base (``/Datafari``): the API prefix without ``/rest/v2.0``."""
    return get_services().settings.api_prefix.rstrip("/").removesuffix("/v2.0").removesuffix("/rest")


def click_url(doc: dict[str, Any]) -> str | None:
    """The address a result's title leads to (DatafariUI appends ``&<its search>``)."""
    if not isinstance(doc.get("id"), str):
        return None
    return f"{datafari_base()}/URL?" + urlencode({"id": doc["id"]}, quote_via=quote)


def _readable(field: str, value: str) -> dict[str, Any] | None:
    params = [
        ("q", "*:*"),
        ("defType", "lucene"),
        ("fq", f"{{!term f={field} v=$key}}"),
        ("key", value),
        ("rows", 1),
        ("fl", "id,title,url,exactContent"),
    ]
    try:
        docs = get_services().main.search("select", params, current_access())["response"]["docs"]
    except SolrError as exc:
        raise DatafariError("ragTechnicalError", "The document could not be looked up.", detail=str(exc)) from exc
    return docs[0] if docs else None


def _key() -> tuple[str, str]:
    for field in ("id", "url"):
        value = request.args.get(field)
        if value is not None:
            if not value.strip() or len(value) > MAX_ID_CHARS:
                raise DatafariError("badRequest", f"'{field}' must be 1 to {MAX_ID_CHARS} characters.")
            return field, value
    raise DatafariError("badRequest", "Give the document's 'id' (or its 'url').")


def _first(value: Any) -> str:
    return str(value[0] if isinstance(value, list) and value else value or "")


@bp.get("/URL")
@endpoint(
    "Open a search result the user may read: its web address, or the text the index keeps",
    {
        302: Reply("to the document's http(s) address"),
        200: Reply("the text of a document with no web address", {"text/plain": {"type": "string"}}),
        **refusals(400, 401, 403, 404, 503),
    },
    params=(
        Param("id", KEY, "the result's id"),
        Param("url", KEY, "its url, when no id is given"),
    ),
)
def open_document() -> WerkzeugResponse:
    """The search DatafariUI appends (``q``, ``fq``, ``position``…), which Datafari records for its
    statistics, is not used."""
    doc = _readable(*_key())
    if doc is None:
        raise DatafariError("documentNotFound")
    url = _first(doc.get("url"))
    if url.startswith(WEB):
        return redirect(url, 302)
    name = (url.rsplit("/", 1)[-1] or _first(doc.get("id"))) + ".txt"
    response = Response(_first(doc.get("exactContent")), mimetype="text/plain")
    response.headers["Content-Disposition"] = "inline; filename*=UTF-8''" + quote(name)
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
