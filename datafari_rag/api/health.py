"""``GET /health``: is every part the sidecar depends on there and working?

It answers within a second, whatever state Solr or the agent is in: Solr's checks and the agent's
run side by side, each Solr call gets only the time left, and an open circuit (Solr not
answering) is reported at once. Its own timeouts never count toward opening the circuit: a
check's short budget running out is not Solr failing every search.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import urllib3
from flask import Blueprint, current_app, jsonify
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from ..conversations import StoreUnavailable
from ..indexing.indexer import mode_conflict
from ..services import Services
from ..solr import SolrClient, SolrError, admin, model_store, user_properties
from ..solr.collection import Collection
from .context import get_services

bp = Blueprint("health", __name__)


_pool = urllib3.PoolManager(retries=False)
_checks = ThreadPoolExecutor(max_workers=4, thread_name_prefix="health")
BUDGET = 0.8  # seconds for every check together (the answer itself takes a few ms more)


def _left(ends: float) -> float:
    """The time left for the next call; none left is a failure like a timeout."""
    left = ends - time.monotonic()
    if left <= 0.01:
        raise SolrError(0, "no answer within the health check's second")
    return left


def _check_solr(services: Services, ends: float) -> dict[str, Any]:
    settings, solr = services.settings, services.solr.probe()  # a check's timeout is not Solr failing
    try:
        info = admin.system_info(solr, _left(ends))
        collections = set(admin.list_collections(solr, _left(ends)))
    except SolrError as exc:
        return {"solr": {"status": "DOWN", "error": str(exc)}}
    report: dict[str, Any] = {"solr": {"status": "UP", "url": solr.base_url, **info}, "collections": {}}
    for name in (settings.collection_main, settings.collection_vector):
        collection = Collection(solr, name)
        if name not in collections:
            report["collections"][name] = {"status": "MISSING"}
            continue
        try:
            report["collections"][name] = {"status": "UP", "numDocs": collection.count(timeout=_left(ends))}
        except SolrError as exc:
            report["collections"][name] = {"status": "DOWN", "error": str(exc)}
    if settings.collection_vector in collections:
        try:
            models = model_store.get_models(solr, settings.collection_vector, _left(ends))
            wanted = [m for m in models if m.get("name") == settings.embeddings_model]
            report["modelStore"] = {
                "status": "UP" if wanted else "MISSING",
                "models": [model_store.redact(m) for m in models],
            }
        except SolrError as exc:
            report["modelStore"] = {"status": "DOWN", "error": str(exc)}
    else:
        report["modelStore"] = {"status": "MISSING", "models": []}
    if settings.collection_main in collections:
        report["indexing"] = _check_indexing(services, solr, ends)
    return report


def _check_indexing(services: Services, solr: SolrClient, ends: float) -> dict[str, Any]:
    """Who writes the chunks: in ``processor`` mode FileShare's processor (its ``vector.enabled``
    is the switch); in the other modes the sidecar, and then the processor must be off."""
    mode = services.settings.vector_embedding_mode
    try:
        on = user_properties.processor_on(solr, services.settings.collection_main, _left(ends))
    except SolrError as exc:
        return {"status": "DOWN", "mode": mode, "error": str(exc)}
    report: dict[str, Any] = {"status": "UP", "mode": mode, "fileShareProcessor": "on" if on else "off"}
    reason = mode_conflict(services.settings, on)
    if reason:  # updates are refused until one of the two settings changes
        report |= {"status": "MISCONFIGURED", "error": reason}
    return report


def _check_agent(url: str, ends: float) -> dict[str, Any]:
    try:
        response = _pool.request("GET", url.rstrip("/") + "/models", timeout=max(0.01, ends - time.monotonic()))
        if response.status != 200:
            raise ValueError(f"HTTP {response.status}")
        return {"status": "UP", "url": url, "models": [m["id"] for m in response.json()["data"]]}
    except (urllib3.exceptions.HTTPError, ValueError, KeyError, TypeError) as exc:
        return {"status": "DOWN", "url": url, "error": str(exc)}


def _check_store(services: Services) -> dict[str, Any]:
    """The relational store answers, on the file it opened (a deleted or replaced SQLite file is
    refused: what would be written there would be lost)."""
    try:
        engine = services.conversations.get().engine
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        return {"status": "UP", "dialect": engine.dialect.name}
    except (StoreUnavailable, SQLAlchemyError) as exc:
        return {"status": "DOWN", "error": str(exc)}


def _all_up(report: dict[str, Any]) -> bool:
    parts = [report["solr"], report["agent"], report["store"], report.get("modelStore", {"status": "DOWN"})]
    parts += [report["indexing"]] if "indexing" in report else []
    parts += list(report.get("collections", {}).values()) or [{"status": "MISSING"}]
    return all(p.get("status") == "UP" for p in parts)


@bp.get("/health")
def health() -> Any:
    services = get_services()
    ends = time.monotonic() + BUDGET
    agent = _checks.submit(_check_agent, services.settings.agent_url, ends)
    store = _checks.submit(_check_store, services)
    report = _check_solr(services, ends)
    report["agent"] = agent.result()
    try:
        report["store"] = store.result(timeout=max(0.01, ends - time.monotonic()))
    except FutureTimeout:
        report["store"] = {"status": "DOWN", "error": "no answer within the health check's second"}
    report["status"] = "UP" if _all_up(report) else "DOWN"
    current_app.logger.debug("health: %s", report["status"])
    return jsonify(report), (200 if report["status"] == "UP" else 503)
