"""``GET /Datafari/URL?id=…``: where a search result's title — and an answer's citation — leads.

Datafari serves every result through this address so that opening a document is a request of the
user's: here the document is looked up by id (or by url) with the user's access filter, as every
read is. A document the user may read is opened: its http(s) address by a redirect, any other
(``upload://``, ``file://``) as the text the index stores — with ``passage`` (the cited chunk),
as a page with that passage highlighted, or as JSON for a client that asks for it (the web UI's
preview). A document that does not exist and one the user may not read get the same 404, so an
id reveals nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from flask import Blueprint, Response, redirect, render_template_string, request
from werkzeug.wrappers import Response as WerkzeugResponse

from ...errors import DatafariError
from ...solr import SolrError
from ..http.answers import DocumentPreview
from ..http.auth import current_access
from ..http.context import get_services
from ..http.contract import HTML, JSON, Param, Reply, endpoint, refusals
from ..http.errors import ok_content
from ..http.validation import MAX_ID_CHARS

bp = Blueprint("document_link", __name__)

WEB = ("http://", "https://")
KEY = {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS}
MAX_PASSAGE = 4000
PAGE = (Path(__file__).resolve().parents[2] / "ui" / "templates" / "document.html").read_text(encoding="utf-8")
POLICY = "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"


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


def locate(text: str, passage: str) -> tuple[int, int] | None:
    """Where ``passage`` (a chunk as it was sent to the LLM: its spaces and punctuation may differ)
    is in ``text``: its words in order, anything but a word between them; when the whole does not
    match, the longest run of its first words that does (at least three)."""
    words = re.findall(r"\w+", passage)[:80]
    runs = sorted({len(words), *(n for n in (40, 20, 10, 5, 3) if n < len(words))}, reverse=True) if words else []
    for size in runs:
        found = re.search(r"\W+".join(re.escape(w) for w in words[:size]), text, re.IGNORECASE)
        if found:
            end = found.end()
            tail = re.search(r"[^\w\s]+$", passage.strip()) if size == len(words) else None
            if tail and text.startswith(tail.group(), end):  # the passage's closing punctuation too
                end += len(tail.group())
            return found.start(), end
    return None


def _passage() -> str | None:
    value = request.args.get("passage")
    if value is not None and (not value.strip() or len(value) > MAX_PASSAGE):
        raise DatafariError("badRequest", f"'passage' must be 1 to {MAX_PASSAGE} characters.")
    return value


def _wants_json() -> bool:
    return request.accept_mimetypes.best_match(["text/html", "application/json"]) == "application/json"


def _preview(doc: dict[str, Any], passage: str) -> Response:
    """The document's text with the passage highlighted: a page, or JSON for the web UI."""
    text, title, url = _first(doc.get("exactContent")), _first(doc.get("title")), _first(doc.get("url"))
    span = locate(text, passage)
    if _wants_json():
        where = {"start": span[0], "end": span[1]} if span else None
        return ok_content({"document": {"id": doc["id"], "title": title, "url": url, "text": text, "passage": where}})
    start, end = span or (len(text), len(text))
    html = render_template_string(
        PAGE, title=title or url, url=url, before=text[:start], passage=text[start:end], after=text[end:]
    )
    response = Response(html, mimetype="text/html")
    response.headers["Content-Security-Policy"] = POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@bp.get("/URL")
@endpoint(
    "Open a search result the user may read: its web address, or the text the index keeps",
    {
        302: Reply("to the document's http(s) address"),
        200: Reply(
            "the text of a document with no web address; with passage, a page with it highlighted, "
            "or (Accept: application/json) the text and where the passage is",
            {"text/plain": {"type": "string"}, HTML: {}, JSON: DocumentPreview},
        ),
        **refusals(400, 401, 403, 404, 503),
    },
    params=(
        Param("id", KEY, "the result's id"),
        Param("url", KEY, "its url, when no id is given"),
        Param("passage", {"type": "string", "minLength": 1, "maxLength": MAX_PASSAGE}, "a cited passage to show"),
    ),
)
def open_document() -> WerkzeugResponse:
    """The search DatafariUI appends (``q``, ``fq``, ``position``…), which Datafari records for its
    statistics, is not used."""
    key, passage = _key(), _passage()
    doc = _readable(*key)
    if doc is None:
        raise DatafariError("documentNotFound")
    url = _first(doc.get("url"))
    if url.startswith(WEB) and not (passage is not None and _wants_json()):
        return redirect(url, 302)
    if passage is not None:
        return _preview(doc, passage)
    name = (url.rsplit("/", 1)[-1] or _first(doc.get("id"))) + ".txt"
    response = Response(_first(doc.get("exactContent")), mimetype="text/plain")
    response.headers["Content-Disposition"] = "inline; filename*=UTF-8''" + quote(name)
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
