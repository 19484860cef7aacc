"""Datafari's v1.0 field lists, which DatafariUI's advanced search builds its form from
(``v1.0/fields/info``, ``exact``, ``autocomplete``, ``fixedvalues``, ``label``).

The fields are FileShare's, read from Solr's schema API: the indexed ones a user may search on,
never an access-control field, an internal one (``_version_``, ``_root_``) or one that is not
indexed. Their ``type`` is the name DatafariUI's form knows (``date``, ``long``, ``int``, ``float``,
``double``; any other is searched as text), Solr's own in ``solrType``. This product configures
no autocompleted, fixed-value or relabelled field: those lists are empty.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, jsonify

from ...solr import SolrError
from ..http.answers import V1Error, V1Ok
from ..http.context import get_services
from ..http.contract import endpoint, json
from ..http.validation import names_acl_field

bp = Blueprint("datafari_fields", __name__)

# Solr's point types by the names DatafariUI's advanced search turns into date and number inputs
FORM_TYPES = {"pdate": "date", "plong": "long", "pint": "int", "pfloat": "float", "pdouble": "double"}
ANSWERS = {200: json(V1Ok, "Datafari's v1.0 answer"), 503: json(V1Error, "Solr's schema cannot be read")}


def searchable_fields() -> list[dict[str, Any]]:
    """FileShare's indexed fields a user may search on, as DatafariUI's form reads them."""
    services = get_services()
    found = services.solr.get(f"{services.main.name}/schema/fields", {"showDefaults": "true"})
    fields = []
    for field in found.get("fields", []):
        name = str(field.get("name", ""))
        if not name or name.startswith("_") or names_acl_field(name) or field.get("indexed") is False:
            continue
        solr_type = str(field.get("type", ""))
        fields.append(
            {
                "name": name,
                "type": FORM_TYPES.get(solr_type, solr_type),
                "solrType": solr_type,
                "indexed": True,
                "stored": bool(field.get("stored", False)),
                "multiValued": bool(field.get("multiValued", False)),
            }
        )
    return sorted(fields, key=lambda f: f["name"])


def _answer(content: dict[str, Any]) -> Response:
    return jsonify({"status": "OK", "content": content})


def _schema_failure(exc: SolrError) -> tuple[Response, int]:
    current_app.logger.warning("fields: Solr's schema could not be read: %s", exc)
    reason = "Solr's schema cannot be read now; try again later."
    return jsonify({"status": "ERROR", "content": {"code": 503, "reason": reason}}), 503


@bp.get("/fields/info")
@endpoint("The fields the advanced search offers: FileShare's indexed fields, without the ACL ones", ANSWERS)
def fields_info() -> Any:
    try:
        return _answer({"fields": searchable_fields()})
    except SolrError as exc:
        return _schema_failure(exc)


@bp.get("/fields/exact")
@endpoint("The fields with an exact-match twin (<name>_exact)", ANSWERS)
def exact_fields() -> Any:
    try:
        names = {f["name"] for f in searchable_fields()}
    except SolrError as exc:
        return _schema_failure(exc)
    return _answer({"exactFieldsList": sorted(n for n in names if f"{n}_exact" in names)})


@bp.get("/fields/autocomplete")
@endpoint("Fields whose values are autocompleted in the advanced search: none configured", ANSWERS)
def autocomplete_fields() -> Response:
    return _answer({"autocompleteFields": {}})


@bp.get("/fields/fixedvalues")
@endpoint("Fields offered as a list of fixed values in the advanced search: none configured", ANSWERS)
def fixed_values_fields() -> Response:
    return _answer({"fixedValuesFields": {}})


@bp.get("/fields/label")
@endpoint("Labels shown for field values in the advanced search: none configured", ANSWERS)
def labeled_fields() -> Response:
    return _answer({"mappingFieldNameValues": {}})
