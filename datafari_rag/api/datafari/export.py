"""``GET …/results/export``: DatafariUI's "Export results" — the current search's results, as the
user may read them, in an Excel workbook (``type=excel``) or a CSV file (``type=csv``).

The search is the page's (``query``, ``fq[]``, ``sort``, ``q.op``, the page's ``fl``), checked as
``search/select`` checks it, run with the user's filter, and bounded: ``nbResults`` (1 to 5000, as
DatafariUI offers) rows read 500 at a time. A cell whose text starts like a formula (``=``, ``+``,
``-``, ``@``) is written as text, so opening the file runs nothing.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from flask import Blueprint, Response, request
from openpyxl import Workbook
from werkzeug.datastructures import MultiDict

from ...errors import DatafariError
from ...solr import SolrError
from ...solr.search import from_user
from ..http.answers import Error
from ..http.auth import current_access
from ..http.context import get_services
from ..http.contract import JSON, REFUSALS, Param, Reply, endpoint, names, refusals
from ..http.validation import bounded_int, field_list, names_acl_field, sort_clause
from . import search_params
from .search import solr_failure

bp = Blueprint("export", __name__)

MAX_RESULTS = 5000
PAGE = 500
DEFAULT_FIELDS = "id,title,url,extension,last_modified,author"
FORMULA = ("=", "+", "-", "@", "\t", "\r")
TEXT = {"type": "string", "minLength": 1}
# DatafariUI's names for the page's filters and facets (query-context.js exportQueryResult)
RENAMED = {"fq[]": "fq", "facetField[]": "facet.field", "facetQuery[]": "facet.query"}
PARAMS = (
    Param("query", TEXT, "the search (edismax); default *:*"),
    Param("type", {"enum": ["excel", "csv"]}, "the file: Excel (xlsx) or CSV", True),
    Param("nbResults", {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS}, "how many results (default 100)"),
    Param("fl", {"type": "string"}, "the columns: the page's fields"),
    Param("sort", {"type": "string"}),
    Param("q.op", {"enum": ["AND", "OR"]}),
    Param("rows", {"type": "integer", "minimum": 0, "maximum": 1000}, "the page's: not used"),
    Param("start", {"type": "integer", "minimum": 0, "maximum": 10_000}, "the page's: not used"),
    Param("aggregator"),
    Param("fq[]", TEXT, "the page's filters", repeatable=True),
    Param("facetField[]", TEXT, "the page's facets: checked, not used", repeatable=True),
    Param("facetQuery[]", TEXT, "the page's query facets: checked, not used", repeatable=True),
)
MEDIA = {
    "excel": ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"),
    "csv": ("text/csv", "csv"),
}
REFUSED = refusals(*REFUSALS)
FILES: dict[str, Any] = {m: {"type": "string", "format": "binary"} for m, _ in MEDIA.values()} | {JSON: Error}


def _facet_option(name: str) -> bool:
    """The page's facet settings DatafariUI adds to the export's address (``facet``, ``facet.*``,
    ``f.<field>.facet.*``): they change nothing in an export, which has no facets."""
    return name == "facet" or name.startswith("facet.") or search_params.is_per_field(name)


def _checked_search() -> tuple[list[tuple[str, Any]], list[str], str, int]:
    """The Solr parameters of the page's search, the columns, the format and how many rows."""
    args = request.args
    unknown = sorted(n for n in args if n not in names(PARAMS) and not _facet_option(n))
    if unknown:
        raise DatafariError("ragBadRequest", f"Unsupported parameter(s): {', '.join(unknown)}.")
    kind = args.get("type", "")
    if kind not in MEDIA:
        raise DatafariError("ragBadRequest", f"'type' must be one of {', '.join(MEDIA)}.")
    max_length = get_services().settings.query_max_length
    query = args.get("query") or "*:*"
    search_params.query("query", query, max_length)
    page = MultiDict([(RENAMED.get(k, k), v) for k, v in args.items(multi=True) if k in RENAMED])
    fq = from_user("fq", "")[0]
    filters = [p for p in search_params.facets_and_filters(page, max_length) if p[0] == fq]
    fields = field_list(args.get("fl") or DEFAULT_FIELDS, "fl").split(",")
    params: list[tuple[str, Any]] = [from_user("q", query), ("defType", "edismax"), ("hl", "false"), *filters]
    params += [from_user("fl", ",".join(fields))]
    if args.get("q.op") is not None:
        if args["q.op"] not in ("AND", "OR"):
            raise DatafariError("ragBadRequest", "'q.op' must be AND or OR.")
        params.append(("q.op", args["q.op"]))
    if args.get("sort"):
        params.append(from_user("sort", sort_clause(args["sort"])))
    for name, low, high in (("rows", 0, 1000), ("start", 0, 10_000)):
        bounded_int(args.get(name), name, low, high, 0)
    search_params.aggregator(args.get("aggregator"))
    wanted = bounded_int(args.get("nbResults"), "nbResults", 1, MAX_RESULTS, 100)
    return params, [f for f in fields if f not in ("*", "score")], kind, wanted


def _results(params: list[tuple[str, Any]], wanted: int) -> list[dict[str, Any]]:
    main, access = get_services().main, current_access()
    docs: list[dict[str, Any]] = []
    while len(docs) < wanted:
        rows = min(PAGE, wanted - len(docs))
        try:
            found = main.search("select", [*params, ("start", len(docs)), ("rows", rows)], access)
        except SolrError as exc:
            raise solr_failure(exc) from exc
        page = found["response"]["docs"]
        docs += page
        if len(page) < rows:
            break
    return [{k: v for k, v in d.items() if not names_acl_field(k)} for d in docs]


def _cell(value: Any) -> str:
    text = "; ".join(str(v) for v in value) if isinstance(value, list) else "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA) else text


def _table(docs: list[dict[str, Any]], fields: list[str]) -> list[list[str]]:
    columns = fields or sorted({k for d in docs for k in d})
    return [columns, *([_cell(d.get(c)) for c in columns] for d in docs)]


def _file(table: list[list[str]], kind: str) -> bytes:
    if kind == "csv":
        out = io.StringIO()
        csv.writer(out).writerows(table)
        return out.getvalue().encode("utf-8-sig")  # the BOM: Excel opens UTF-8 CSV as such
    book = Workbook(write_only=True)
    sheet = book.create_sheet("Results")
    for row in table:
        sheet.append(row)
    out_bytes = io.BytesIO()
    book.save(out_bytes)
    return out_bytes.getvalue()


@bp.get("/results/export")
@endpoint(
    "The current search's results the user may read, as an Excel workbook or a CSV file",
    {
        200: Reply("the file; a refused search: Datafari's error JSON (its labels answer 200)", FILES),
        **REFUSED,
    },
    params=PARAMS,
)
def export() -> Response:
    params, fields, kind, wanted = _checked_search()
    media, suffix = MEDIA[kind]
    body = _file(_table(_results(params, wanted), fields), kind)
    response = Response(body, mimetype=media)
    response.headers["Content-Disposition"] = f'attachment; filename="results.{suffix}"'
    return response
