"""``sync`` and ``reconcile``: keeping VectorMain in step with FileShare, however FileShare changed.

Every chunk records its parent's ``_version_`` (``parent_version``) and how many chunks that
version has (``chunk_count``). Solr gives a document a new version on every write — a full add,
an atomic update (``{"set": …}``), by any client — so a parent whose version differs from its
chunks' has changed since they were written: its ACL, its text, any field; and a parent with
fewer chunks than ``chunk_count`` says (a writer killed midway) is incomplete. Both commands
compare versions and counts, never dates.

sync: parents new or changed since their chunks were written get their chunks (again); chunks
whose parent vanished are deleted.
reconcile: the same, plus chunks without a vector.
Either writes the parents concerned again: FileShare's processor chunks them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import chunk_fields as F
from .indexer import Indexer


@dataclass
class Report:
    found: dict[str, int] = field(default_factory=dict)
    fixed: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"{name}: found {self.found[name]}, fixed {self.fixed.get(name, 0)}" for name in self.found]
        return out + [f"error: {e}" for e in self.errors[:20]]


@dataclass(frozen=True)
class Chunks:
    """What VectorMain holds of one parent."""

    count: int
    versions: frozenset[int]  # the parent versions its chunks were written from (empty: unknown)
    missing_vectors: int
    complete: bool  # as many chunks as their chunk_count says, all agreeing


def _chunks_by_parent(indexer: Indexer) -> dict[str, Chunks]:
    facet = {
        "parents": {
            "type": "terms",
            "field": F.PARENT,
            "limit": -1,
            "facet": {
                "low": f"min({F.PARENT_VERSION})",
                "high": f"max({F.PARENT_VERSION})",
                "dated": f"sum(if(exists({F.PARENT_VERSION}),1,0))",
                "missing": f"sum(if({F.HAS_VECTOR},0,1))",
                "fewest": f"min({F.COUNT})",
                "most": f"max({F.COUNT})",
            },
        }
    }
    out: dict[str, Chunks] = {}
    for bucket in indexer.vectors.facet(facet).get("parents", {}).get("buckets", []):
        complete = bucket.get("dated", 0) == bucket["count"]  # every chunk knows its parent version
        versions = frozenset({int(bucket["low"]), int(bucket["high"])}) if complete and "low" in bucket else frozenset()
        complete = bucket.get("fewest") == bucket.get("most") == bucket["count"]
        out[bucket["val"]] = Chunks(bucket["count"], versions, int(bucket.get("missing", 0)), complete)
    return out


def _parent_versions(indexer: Indexer) -> dict[str, int | None]:
    return {d["id"]: d.get("_version_") for d in indexer.main.scan("*:*", "id,_version_")}


def _changed(parents: dict[str, int | None], chunks: dict[str, Chunks]) -> list[str]:
    """Parents with no chunks, whose chunks were written from another version of them, or whose
    set of chunks is incomplete."""
    return sorted(
        p
        for p, version in parents.items()
        if p not in chunks or chunks[p].versions != {version} or not chunks[p].complete
    )


def _repair(indexer: Indexer, report: Report, name: str, parent_ids: list[str]) -> None:
    report.found[name] = len(parent_ids)
    if not parent_ids:
        return
    results = indexer.rechunk(parent_ids)
    report.fixed[name] = sum(1 for r in results if r.status == "ok")
    report.errors += [f"{r.id}: {r.error}" for r in results if r.status == "error"]


def _drop_vanished(indexer: Indexer, report: Report, name: str, vanished: list[str]) -> None:
    report.found[name] = len(vanished)
    if vanished:
        indexer.delete_children(vanished, commit=True)
        report.fixed[name] = len(vanished)


def sync(indexer: Indexer) -> Report:
    report = Report()
    parents, chunks = _parent_versions(indexer), _chunks_by_parent(indexer)
    _repair(indexer, report, "new or changed parents", _changed(parents, chunks))
    _drop_vanished(indexer, report, "vanished parents", sorted(set(chunks) - set(parents)))
    return report


def reconcile(indexer: Indexer) -> Report:
    report = Report()
    parents, chunks = _parent_versions(indexer), _chunks_by_parent(indexer)
    _drop_vanished(indexer, report, "orphan chunks (parents)", sorted(set(chunks) - set(parents)))
    changed = _changed(parents, chunks)
    _repair(indexer, report, "parents without chunks", [p for p in changed if p not in chunks])
    _repair(indexer, report, "stale or incomplete chunks (parents)", [p for p in changed if p in chunks])
    done = set(changed)
    no_vector = sorted(p for p, c in chunks.items() if p in parents and c.missing_vectors and p not in done)
    _repair(indexer, report, "chunks without a vector (parents)", no_vector)
    return report
