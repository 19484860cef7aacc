"""``sync`` and ``reconcile``: keeping VectorMain in step with FileShare.

sync: parents written straight into FileShare by other indexers (ManifoldCF, Solr's post tool,
any client) since the last sync (by ``indexed_at``) get their chunks; chunks whose parent
vanished are deleted.
reconcile: compares both collections and repairs parents without chunks, stale chunks (older
than their parent), orphan chunks, chunks without a vector, and what the outbox still holds.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ..paths import var_dir
from .indexer import Indexer

# Documents soft-committed just before a sync started must not be missed.
SAFETY = timedelta(seconds=30)


@dataclass
class Report:
    found: dict[str, int] = field(default_factory=dict)
    fixed: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"{name}: found {self.found[name]}, fixed {self.fixed.get(name, 0)}" for name in self.found]
        return out + [f"error: {e}" for e in self.errors[:20]]


def _parents_with_chunks(indexer: Indexer) -> dict[str, dict[str, Any]]:
    """parent id → {count, oldest (min indexed_at), missing (chunks without vector)} from VectorMain."""
    facet = {
        "parents": {
            "type": "terms",
            "field": "parent_doc",
            "limit": -1,
            "facet": {"oldest": "min(indexed_at)", "missing": "sum(if(has_vector,0,1))"},
        }
    }
    buckets = indexer.vectors.facet(facet).get("parents", {}).get("buckets", [])
    return {b["val"]: {"count": b["count"], "oldest": b.get("oldest"), "missing": b.get("missing", 0)} for b in buckets}


def _parse_date(value: Any) -> datetime | None:
    if isinstance(value, str):
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    if isinstance(value, int | float):  # json.facet min() of a date comes as epoch ms
        return datetime.fromtimestamp(value / 1000, UTC)
    return None


def _repair(indexer: Indexer, report: Report, name: str, parent_ids: list[str]) -> None:
    report.found[name] = len(parent_ids)
    if not parent_ids:
        return
    results = indexer.rechunk(parent_ids)
    report.fixed[name] = sum(1 for r in results if r.status == "ok" and not r.pending)
    report.errors += [f"{r.id}: {r.error}" for r in results if r.status == "error" or r.pending]


def reconcile(indexer: Indexer) -> Report:
    report = Report()
    parents = {d["id"]: _parse_date(d.get("indexed_at")) for d in indexer.main.scan("*:*", "id,indexed_at")}
    chunks = _parents_with_chunks(indexer)
    orphans = sorted(set(chunks) - set(parents))
    report.found["orphan chunks (parents)"] = len(orphans)
    if orphans:
        indexer.delete_children(orphans, commit=True)
        report.fixed["orphan chunks (parents)"] = len(orphans)
    _repair(indexer, report, "parents without chunks", sorted(set(parents) - set(chunks)))
    stale = [
        pid
        for pid, info in chunks.items()
        if pid in parents
        and parents[pid]
        and _parse_date(info["oldest"])
        and _parse_date(info["oldest"]) < parents[pid]
    ]
    _repair(indexer, report, "stale chunks (parents)", sorted(stale))
    no_vector = [pid for pid, info in chunks.items() if pid in parents and info["missing"] and pid not in stale]
    _repair(indexer, report, "chunks without a vector (parents)", sorted(no_vector))
    done = set(orphans) | set(stale) | set(no_vector)
    queued = [pid for pid, _, _ in indexer.outbox.pending(indexer.main.name) if pid not in done]
    _repair(indexer, report, "outbox", queued)
    return report


def sync(indexer: Indexer) -> Report:
    state_file = var_dir() / f"sync-{indexer.main.name}.json"
    started = datetime.now(UTC)
    since = None
    if state_file.exists():
        since = datetime.fromisoformat(json.loads(state_file.read_text())["since"])
    query = "*:*" if since is None else f"indexed_at:[{(since - SAFETY).strftime('%Y-%m-%dT%H:%M:%SZ')} TO *]"
    report = Report()
    changed = [d["id"] for d in indexer.main.scan(query, "id")]
    _repair(indexer, report, "new or changed parents", changed)
    chunks = _parents_with_chunks(indexer)
    present = {d["id"] for d in indexer.main.scan("*:*", "id")}
    vanished = sorted(set(chunks) - present)
    report.found["vanished parents"] = len(vanished)
    if vanished:
        indexer.delete_children(vanished, commit=True)
        report.fixed["vanished parents"] = len(vanished)
    state_file.parent.mkdir(parents=True, exist_ok=True)
    state_file.write_text(json.dumps({"since": started.isoformat(), "finished": time.time()}))
    return report
