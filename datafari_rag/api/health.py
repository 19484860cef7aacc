"""``GET /health``: is every part the sidecar depends on there and working?"""

from __future__ import annotations

from typing import Any

import urllib3
from flask import Blueprint, current_app, jsonify

from ..services import Services
from ..solr import SolrError, admin, model_store
from .context import get_services

bp = Blueprint("health", __name__)


_pool = urllib3.PoolManager(retries=False)


def _check_solr(services: Services) -> dict[str, Any]:
    settings, solr = services.settings, services.solr
    try:
        info = admin.system_info(solr)
        collections = set(admin.list_collections(solr))
    except SolrError as exc:
        return {"solr": {"status": "DOWN", "error": str(exc)}}
    report: dict[str, Any] = {"solr": {"status": "UP", "url": solr.base_url, **info}, "collections": {}}
    for collection in (services.main, services.vectors):
        name = collection.name
        if name not in collections:
            report["collections"][name] = {"status": "MISSING"}
            continue
        try:
            report["collections"][name] = {"status": "UP", "numDocs": collection.count()}
        except SolrError as exc:
            report["collections"][name] = {"status": "DOWN", "error": str(exc)}
    if settings.collection_vector in collections:
        try:
            models = model_store.get_models(solr, settings.collection_vector)
            wanted = [m for m in models if m.get("name") == settings.embeddings_model]
            report["modelStore"] = {
                "status": "UP" if wanted else "MISSING",
                "models": [model_store.redact(m) for m in models],
            }
        except SolrError as exc:
            report["modelStore"] = {"status": "DOWN", "error": str(exc)}
    else:
        report["modelStore"] = {"status": "MISSING", "models": []}
    return report


def _check_agent(url: str) -> dict[str, Any]:
    try:
        response = _pool.request("GET", url.rstrip("/") + "/models", timeout=5)
        if response.status != 200:
            raise ValueError(f"HTTP {response.status}")
        return {"status": "UP", "url": url, "models": [m["id"] for m in response.json()["data"]]}
    except (urllib3.exceptions.HTTPError, ValueError, KeyError, TypeError) as exc:
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
