"""``GET /health``: is every part the sidecar depends on there and working?"""

from __future__ import annotations

from typing import Any

import requests
from flask import Blueprint, current_app, jsonify

from ..services import get_services
from ..solr import SolrError, admin

bp = Blueprint("health", __name__)


def _check_solr(services: Any) -> dict[str, Any]:
    settings, solr = services.settings, services.solr
    try:
        info = admin.system_info(solr)
        collections = set(admin.list_collections(solr))
    except SolrError as exc:
        return {"solr": {"status": "DOWN", "error": str(exc)}}
    report: dict[str, Any] = {"solr": {"status": "UP", "url": solr.base_url, **info}, "collections": {}}
    for name in (settings.collection_main, settings.collection_vector):
        if name not in collections:
            report["collections"][name] = {"status": "MISSING"}
            continue
        try:
            found = solr.get(f"{name}/select", {"q": "*:*", "rows": 0, "defType": "lucene"})["response"]["numFound"]
            report["collections"][name] = {"status": "UP", "numDocs": found}
        except SolrError as exc:
            report["collections"][name] = {"status": "DOWN", "error": str(exc)}
    if settings.collection_vector in collections:
        try:
            models = admin.get_models(solr, settings.collection_vector)
            wanted = [m for m in models if m.get("name") == settings.embeddings_model]
            report["modelStore"] = {
                "status": "UP" if wanted else "MISSING",
                "models": [admin.redact_model(m) for m in models],
            }
        except SolrError as exc:
            report["modelStore"] = {"status": "DOWN", "error": str(exc)}
    else:
        report["modelStore"] = {"status": "MISSING", "models": []}
    return report


def _check_agent(url: str) -> dict[str, Any]:
    try:
        response = requests.get(url.rstrip("/") + "/models", timeout=5)
        response.raise_for_status()
        return {"status": "UP", "url": url, "models": [m["id"] for m in response.json()["data"]]}
    except (requests.RequestException, ValueError, KeyError) as exc:
        return {"status": "DOWN", "url": url, "error": str(exc)}


def _all_up(report: dict[str, Any]) -> bool:
    parts = [report["solr"], report["agent"], report.get("modelStore", {"status": "DOWN"})]
    parts += list(report.get("collections", {}).values()) or [{"status": "MISSING"}]
    return all(p.get("status") == "UP" for p in parts)


@bp.get("/health")
def health() -> Any:
    services = get_services()
    report = _check_solr(services)
    report["agent"] = _check_agent(services.settings.agent_url)
    report["status"] = "UP" if _all_up(report) else "DOWN"
    current_app.logger.debug("health: %s", report["status"])
    return jsonify(report), (200 if report["status"] == "UP" else 503)
