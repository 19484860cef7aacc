"""``GET /health``, ``/health/ready`` and ``/health/live``: is the sidecar, and every part it
depends on, there and working?

The dependencies are checked in the background, every ``health.interval`` seconds, by one thread
per process (:class:`Monitor`), never by the request that asks: an answer is immediate whatever
state Solr, the agent or the store are in, however many clients ask. Readiness means "a request
sent now would be served" (docs/deployment.md#readiness):

- a part that refuses, errs or is missing is a **failed** check;
- a part that does not answer within ``health.timeout`` is **SLOW**, not down: a busy Solr still
  serves. A slow check fails only if nothing was served meanwhile — no request of this process
  answered by Solr since the last check, and one patient look (``system_info`` with the
  ``solr.timeout``) gets no answer either;
- 503 after ``health.failures`` failed checks in a row, 200 again at the first that passes
  (hysteresis); an open Solr circuit — searches are failing now — answers 503 at once.

The checks never count toward opening the circuit (:meth:`SolrClient.probe`), and the store's
check catches a deleted or replaced SQLite file.

- ``/health/live``: the process answers (200), nothing else is looked at: restart it only if not.
- ``/health/ready``: 200 when every part is UP, 503 otherwise, with the last check's report; an
  external LLM is reported as ``llm`` but does not count (searches work without it).
- ``/health``: the same report and status as ready (the shape it always had).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import urllib3
from flask import Blueprint, current_app, jsonify
from sqlalchemy.exc import SQLAlchemyError

from ...config import Settings
from ...services import Services
from ...solr import SolrClient, SolrError, admin, model_store, user_properties
from ...solr.collection import Collection
from ...store import StoreUnavailable
from ...store.probe import probe_write
from ..http.answers import Health, Live
from ..http.context import get_services, live
from ..http.contract import endpoint, json

bp = Blueprint("health", __name__)
log = logging.getLogger(__name__)


_pool = urllib3.PoolManager(retries=False)
_checks = ThreadPoolExecutor(max_workers=4, thread_name_prefix="health")
FIRST_WAIT = 0.8  # seconds a request waits for a process's very first check before answering


def _left(ends: float) -> float:
    """The time left for the next call; none left is a slow answer, like a timeout."""
    left = ends - time.monotonic()
    if left <= 0.01:
        raise SolrError(0, "no answer within health.timeout", timed_out=True)
    return left


def _failed(exc: SolrError) -> dict[str, Any]:
    """A part's report from its error: SLOW when Solr was reached but did not answer in time."""
    return {"status": "SLOW" if exc.timed_out else "DOWN", "error": str(exc)}


def _check_solr(services: Services, ends: float) -> dict[str, Any]:
    settings, solr = services.settings, services.solr.probe()  # a check's timeout is not Solr failing
    try:
        info = admin.system_info(solr, _left(ends))
        collections = set(admin.list_collections(solr, _left(ends)))
    except SolrError as exc:
        return {"solr": _failed(exc)}
    report: dict[str, Any] = {"solr": {"status": "UP", "url": solr.base_url, **info}, "collections": {}}
    for name in (settings.collection_main, settings.collection_vector):
        collection = Collection(solr, name)
        if name not in collections:
            report["collections"][name] = {"status": "MISSING"}
            continue
        try:
            report["collections"][name] = {"status": "UP", "numDocs": collection.count(timeout=_left(ends))}
        except SolrError as exc:
            report["collections"][name] = _failed(exc)
    if settings.collection_vector in collections:
        try:
            models = model_store.get_models(solr, settings.collection_vector, _left(ends))
            wanted = [m for m in models if m.get("name") == settings.embeddings_model]
            report["modelStore"] = {
                "status": "UP" if wanted else "MISSING",
                "models": [model_store.redact(m) for m in models],
            }
        except SolrError as exc:
            report["modelStore"] = _failed(exc)
    else:
        report["modelStore"] = {"status": "MISSING", "models": []}
    if settings.collection_main in collections:
        report["indexing"] = _check_indexing(services, solr, ends)
    return report


def _check_indexing(services: Services, solr: SolrClient, ends: float) -> dict[str, Any]:
    """Whether FileShare's processor, the only chunk writer, is on (its ``vector.enabled``)."""
    try:
        on = user_properties.processor_on(solr, services.settings.collection_main, _left(ends))
    except SolrError as exc:
        return _failed(exc)
    return {"status": "UP", "fileShareProcessor": "on" if on else "off"}


def _check_agent(url: str, ends: float) -> dict[str, Any]:
    try:
        response = _pool.request("GET", url.rstrip("/") + "/models", timeout=max(0.01, ends - time.monotonic()))
        if response.status != 200:
            raise ValueError(f"HTTP {response.status}")
        return {"status": "UP", "url": url, "models": [m["id"] for m in response.json()["data"]]}
    except urllib3.exceptions.ReadTimeoutError as exc:  # reached, busy: slow, not down
        return {"status": "SLOW", "url": url, "error": str(exc)}
    except (urllib3.exceptions.HTTPError, ValueError, KeyError, TypeError) as exc:
        return {"status": "DOWN", "url": url, "error": str(exc)}


LLM_EVERY = 60.0  # seconds between two looks at an external LLM: its provider counts requests
_llm_seen: dict[tuple[str, str], tuple[float, dict[str, Any]]] = {}  # (url, key) -> (when, report)


def _check_llm(settings: Settings, ends: float) -> dict[str, Any] | None:
    """Whether the external OpenAI-compatible LLM answers its model list with the configured key
    (``GET …/models``: no tokens spent), at most every :data:`LLM_EVERY` seconds. Reported, never
    part of readiness: searches still work while answers fail. None: the local agent (checked
    as ``agent``) or another vendor's API."""
    if not settings.llm_endpoint or settings.llm_service != "openai" or settings.rag_template != "openai":
        return None
    url, key = settings.llm_url, settings.llm_token
    seen = _llm_seen.get((url, key))
    if seen and time.monotonic() - seen[0] < LLM_EVERY:
        return seen[1]
    report: dict[str, Any] = {"url": url, "model": settings.llm_model}
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        response = _pool.request("GET", f"{url}/models", headers=headers, timeout=max(0.01, ends - time.monotonic()))
        if response.status == 200:
            listed = [m.get("id") for m in response.json().get("data", []) if isinstance(m, dict)]
            report |= {"status": "UP", "modelListed": settings.llm_model in listed}
        elif response.status in (401, 403):
            report |= {"status": "DOWN", "error": f"HTTP {response.status}: ai.api.token is refused"}
        elif response.status in (404, 405):
            report |= {"status": "UNCHECKED", "error": f"HTTP {response.status}: it does not list its models"}
        else:
            report |= {"status": "DOWN", "error": f"HTTP {response.status} on {url}/models"}
    except (urllib3.exceptions.HTTPError, ValueError, AttributeError) as exc:
        report |= {"status": "DOWN", "error": str(exc)}
    _llm_seen[(url, key)] = (time.monotonic(), report)
    return report


def _check_store(services: Services) -> dict[str, Any]:
    """The relational store answers and writes, on the file it opened (a deleted or replaced
    SQLite file is refused: what would be written there would be lost; a full disk is refused)."""
    try:
        engine = services.store.conversations().engine
        probe_write(engine)
        return {"status": "UP", "dialect": engine.dialect.name}
    except (StoreUnavailable, SQLAlchemyError) as exc:
        return {"status": "DOWN", "error": str(exc)}


def verdict(report: dict[str, Any]) -> str:
    """UP when every part is; SLOW when none failed but some did not answer in time; DOWN when a
    part refused, erred or is missing. (A Solr that did not answer leaves the rest unknown: SLOW.)"""
    if report["solr"].get("status") == "SLOW":
        parts = [report["solr"], report["agent"], report["store"]]
    else:
        parts = [report["solr"], report["agent"], report["store"], report.get("modelStore", {"status": "DOWN"})]
        parts += [report["indexing"]] if "indexing" in report else []
        parts += list(report.get("collections", {}).values()) or [{"status": "MISSING"}]
    states = {p.get("status") for p in parts}
    if states <= {"UP"}:
        return "UP"
    return "SLOW" if states <= {"UP", "SLOW"} else "DOWN"


def check_all(services: Services, budget: float) -> dict[str, Any]:
    """One check of every part, side by side, within ``budget`` seconds (its status is the
    monitor's to decide: :func:`passes`)."""
    ends = time.monotonic() + budget
    agent = _checks.submit(_check_agent, services.settings.agent_url, ends)
    store = _checks.submit(_check_store, services)
    llm = _checks.submit(_check_llm, services.settings, ends)
    report = _check_solr(services, ends)
    report["agent"] = agent.result()
    if (answering := llm.result()) is not None:
        report["llm"] = answering  # not part of readiness: searches work without it
    try:
        report["store"] = store.result(timeout=max(0.01, ends - time.monotonic()))
    except FutureTimeout:
        report["store"] = {"status": "DOWN", "error": "no answer within health.timeout"}
    return report


class Monitor:
    """The process's background checks: one thread, started by the first request that asks,
    ending when its application is gone (the thread holds the monitor only through a weak
    reference)."""

    def __init__(self, services: Callable[[], Services]) -> None:
        self._services = services
        self._report: dict[str, Any] | None = None
        self._failed_in_a_row = 0
        self._checked_at = 0.0
        self._ready = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        with self._changed:
            if self._thread is None:
                self._thread = threading.Thread(target=_watch, args=(weakref.ref(self),), name="health", daemon=True)
                self._thread.start()

    def check(self) -> float:
        """Runs one check and publishes it; returns the seconds to wait before the next."""
        services = self._services()
        settings = services.settings
        since = self._checked_at
        report = check_all(services, settings.health_timeout)
        passed = passes(verdict(report), served_since(services, since), lambda: answers_at_all(services))
        report["status"] = "UP" if passed else "DOWN"
        with self._changed:
            self._failed_in_a_row = 0 if passed else self._failed_in_a_row + 1
            if passed:
                self._ready = True
            elif self._failed_in_a_row >= settings.health_failures or self._report is None:
                self._ready = False
            self._report, self._checked_at = report, time.monotonic()
            self._changed.notify_all()
        return settings.health_interval

    def latest(self, services: Services) -> tuple[dict[str, Any], bool]:
        """The last check's report (waiting briefly for a process's first) and whether the
        service is ready; an open Solr circuit is reported at once."""
        self.start()
        with self._changed:
            self._changed.wait_for(lambda: self._report is not None, timeout=FIRST_WAIT)
            if self._report is None:
                return {"status": "DOWN", "error": "starting: the first check has not ended yet"}, False
            report = {**self._report, "checkedSecondsAgo": round(time.monotonic() - self._checked_at, 1)}
            ready, failed = self._ready, self._failed_in_a_row
        breaker = services.solr.breaker
        if breaker is not None and breaker.is_open:
            report["solr"] = {
                "status": "DOWN",
                "error": f"Solr at {services.solr.base_url} is not answering (circuit open)",
            }
            ready = False
        report["status"] = "UP" if ready else "DOWN"
        if failed:
            report["failedChecksInARow"] = failed  # while ready: a blip, not yet an outage
        return report, ready


def passes(found: str, served: bool, answers: Callable[[], bool]) -> bool:
    """Whether a check passes: every part up; or no part failed and Solr serves — a request of this
    process was answered since the last check, or, the process being idle, ``answers()`` (one
    patient look) gets an answer. Slow is not down."""
    if found != "SLOW":
        return found == "UP"
    return served or answers()


def served_since(services: Services, moment: float) -> bool:
    """Whether Solr answered one of this process's own requests after ``moment`` (monotonic)."""
    breaker = services.solr.breaker
    return breaker is not None and breaker.last_success > moment


def answers_at_all(services: Services) -> bool:
    """One look at Solr with a request's own patience (``solr.timeout``): is it answering at all?"""
    try:
        admin.system_info(services.solr.probe(), services.settings.solr_timeout)
        return True
    except SolrError:
        return False


def _watch(monitor_ref: weakref.ref[Monitor]) -> None:
    """The checking loop; ends once the monitor (its app) has been collected."""
    while (monitor := monitor_ref()) is not None:
        try:
            pause = monitor.check()
        except RuntimeError as exc:  # the interpreter is ending: its pools take no more work
            if sys.is_finalizing() or "after shutdown" in str(exc):
                return
            log.exception("health check failed")
            pause = 1.0
        except Exception:  # a check that breaks must not end the checking
            log.exception("health check failed")
            pause = 1.0
        del monitor  # hold no reference while sleeping: the app may go away
        time.sleep(pause)


def monitor() -> Monitor:
    """The current application's monitor, made at its first use."""
    extensions = current_app.extensions
    if "health" not in extensions:
        extensions["health"] = Monitor(live().last)
    return extensions["health"]


@bp.get("/health")
@bp.get("/health/ready")
@endpoint(
    "Readiness: Solr, both collections, the model store, the agent and the relational store, checked in the "
    "background (/health is /health/ready)",
    {200: json(Health, "every part is up"), 503: json(Health, "a part is down")},
    public=True,
)
def health() -> Any:
    services = get_services()
    report, ready = monitor().latest(services)
    current_app.logger.debug("health: %s", report["status"])
    return jsonify(report), (200 if ready else 503)


@bp.get("/health/live")
@endpoint("The process answers (nothing else is looked at)", {200: json(Live, "the process is up")}, public=True)
def alive() -> Any:
    return jsonify({"status": "UP"}), 200
