"""The chunk-and-embed processor: FileShare documents in, their chunks (with vectors) in VectorMain.

For each added document it writes the parent to FileShare, splits its ``exactContent``, writes
one child per chunk to VectorMain (embedded by Solr's update chain, or by the sidecar in
batches), then deletes the children left over from a longer earlier version. Deleting a parent,
by id or by query, deletes its children. Bad documents get a per-document error and the rest of
the batch goes through; if VectorMain or the embedding service fails once FileShare has the
parent, the parent goes to the outbox, and ``reconcile``/``sync`` finish the work later.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from ..config import Settings
from ..security import UserAccess
from ..solr import SolrClient, SolrError
from ..solr.search import secured_search
from .children import child_documents, language_fields
from .chunker import chunk_text
from .embedder import ChunkEmbedder, EmbeddingError
from .outbox import Outbox

MAX_ID_CHARS = 2048
CHILD_BATCH = 200
# In solr mode, VectorMain's update chain embeds one chunk at a time; two update requests side by
# side keep two embedding calls (two cores of the agent) busy instead of one.
SOLR_MODE_POSTS = 2
SEP = "\u001f"


class DocumentError(ValueError):
    """A document that cannot be indexed as it is."""


@dataclass
class DocResult:
    id: str | None
    status: str = "ok"  # "ok" | "error"
    chunks: int = 0
    pending: bool = False  # chunks not (all) written yet: in the outbox, finished by reconcile
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None and (k != "pending" or v)}


def quote_term(value: str) -> str:
    """``value`` as a quoted term for Solr's standard query parser."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _text(doc: dict[str, Any]) -> str:
    value = doc.get("exactContent")
    if isinstance(value, list):
        value = "\n".join(str(v) for v in value)
    if not isinstance(value, str) or not value.strip():
        raise DocumentError("the document has no text (exactContent is missing or empty)")
    return value


def _check_utf8(value: Any, where: str = "") -> None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise DocumentError(f"field '{where}' is not valid UTF-8") from None
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_utf8(k, where)
            _check_utf8(v, k)
    elif isinstance(value, list):
        for v in value:
            _check_utf8(v, where)


def validate(doc: Any) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise DocumentError("a document must be a JSON object")
    doc_id = doc.get("id")
    if doc_id is None:
        raise DocumentError("the document has no 'id'")
    if not isinstance(doc_id, str) or not doc_id.strip() or len(doc_id) > MAX_ID_CHARS:
        raise DocumentError(f"'id' must be a non-empty string of at most {MAX_ID_CHARS} characters")
    _check_utf8(doc)
    _text(doc)
    return doc


class ChunkProcessor:
    def __init__(self, solr: SolrClient, settings: Settings, outbox: Outbox | None = None) -> None:
        self.solr = solr
        self.settings = settings
        self.outbox = outbox or Outbox()
        self._embedder: ChunkEmbedder | None = None

    @property
    def embedder(self) -> ChunkEmbedder:
        if self._embedder is None:
            self._embedder = ChunkEmbedder(self.settings)
        return self._embedder

    # --- adding -------------------------------------------------------------------------------

    def add(self, docs: list[Any], commit: bool = False, commit_within: int | None = None) -> list[DocResult]:
        """Writes parents to FileShare and their chunks to VectorMain; one result per document."""
        results: list[DocResult] = []
        valid: list[dict[str, Any]] = []
        for doc in docs:
            try:
                valid.append(validate(doc))
                results.append(DocResult(doc["id"]))
            except DocumentError as exc:
                raw_id = doc.get("id") if isinstance(doc, dict) else None
                results.append(DocResult(raw_id if isinstance(raw_id, str) else None, "error", error=str(exc)))
        by_id = {r.id: r for r in results if r.status == "ok"}
        valid = [{**language_fields(doc, _text(doc)), **doc} for doc in valid]
        accepted = self._write_parents(valid, by_id, commit, commit_within)
        if accepted and self.settings.vector_enabled:
            self._write_chunks(accepted, by_id, commit, commit_within)
        return results

    def _params(self, commit: bool, commit_within: int | None) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if commit:
            params["commit"] = "true"
        if commit_within is not None:
            params["commitWithin"] = commit_within
        return params

    def _write_parents(
        self, docs: list[dict[str, Any]], results: dict[str | None, DocResult], commit: bool, within: int | None
    ) -> list[dict[str, Any]]:
        if not docs:
            return []
        collection = self.settings.collection_main
        try:
            self.solr.post(f"{collection}/update", json=docs, params=self._params(commit, within), timeout=300)
            return docs
        except SolrError:
            pass
        accepted = []  # one bad document fails Solr's whole batch: find which, keep the others
        for doc in docs:
            try:
                self.solr.post(f"{collection}/update", json=[doc], params=self._params(commit, within), timeout=300)
                accepted.append(doc)
            except SolrError as exc:
                results[doc["id"]].status, results[doc["id"]].error = "error", str(exc)
        return accepted

    def _write_chunks(
        self, parents: list[dict[str, Any]], results: dict[str | None, DocResult], commit: bool, within: int | None
    ) -> None:
        children: list[dict[str, Any]] = []
        counts: dict[str, int] = {}
        for parent in parents:
            kids = child_documents(parent, chunk_text(_text(parent), self.settings))
            counts[parent["id"]] = len(kids)
            children += kids
            if parent["id"] in results:
                results[parent["id"]].chunks = len(kids)
        ids = list(counts)
        try:
            collection = self.settings.collection_vector
            if self.settings.vector_embedding_mode == "sidecar":
                self._embed_and_post_children(children, within)
            else:
                self._post_children(children, within)
            # chunks left from a longer earlier version: one delete for the whole batch
            stale = " OR ".join(
                f"(parent_doc:{quote_term(pid)} AND chunk_index:[{n} TO *])" for pid, n in counts.items()
            )
            self.solr.post(f"{collection}/update", json={"delete": {"query": stale}}, timeout=300)
            if commit:
                self.solr.post(f"{collection}/update", json={"commit": {}}, timeout=300)
            sidecar = self.settings.vector_embedding_mode == "sidecar"
            missing = [] if sidecar else self._without_vector([c["id"] for c in children])
        except (SolrError, EmbeddingError) as exc:
            self._defer(ids, results, str(exc))
            return
        failed = sorted({child_id.rsplit("_", 1)[0] for child_id in missing})
        if failed:
            self._defer(failed, results, f"the embedding failed for {len(missing)} chunk(s)")
        self.outbox.remove(self.settings.collection_main, [i for i in ids if i not in failed])

    def _embed_and_post_children(self, children: list[dict[str, Any]], within: int | None) -> None:
        """Sidecar mode: each batch of chunks is written as soon as its vectors come back, while
        the embedding service computes the next ones."""
        size = self.embedder.batch
        vectors = self.embedder.batches([c["embedded_content"] for c in children])
        for start, batch_vectors in zip(range(0, len(children), size), vectors, strict=True):
            batch = children[start : start + size]
            for child, vector in zip(batch, batch_vectors, strict=True):
                child["vector_384"], child["has_vector"] = vector, True
            self._post_chunks(batch, within)

    def _post_children(self, children: list[dict[str, Any]], within: int | None) -> None:
        """Solr mode: VectorMain's update chain embeds one chunk at a time, so the chunks go in
        SOLR_MODE_POSTS requests side by side. The first failure is raised once all have ended."""
        size = max(1, min(CHILD_BATCH, -(-len(children) // SOLR_MODE_POSTS)))
        batches = [children[start : start + size] for start in range(0, len(children), size)]
        with ThreadPoolExecutor(max_workers=SOLR_MODE_POSTS, thread_name_prefix="vector-update") as pool:
            futures = [pool.submit(self._post_chunks, batch, within) for batch in batches]
        for future in futures:
            future.result()

    def _post_chunks(self, batch: list[dict[str, Any]], within: int | None) -> None:
        collection = self.settings.collection_vector
        self.solr.post(f"{collection}/update", json=batch, timeout=600, params=self._params(False, within))

    def _without_vector(self, child_ids: list[str]) -> list[str]:
        """Chunks Solr indexed without a vector (the text-to-vector processor only logs failures)."""
        missing: list[str] = []
        for start in range(0, len(child_ids), CHILD_BATCH):
            batch = child_ids[start : start + CHILD_BATCH]
            docs = self._get(self.settings.collection_vector, batch, "id,has_vector")
            missing += [d["id"] for d in docs if d.get("has_vector") is False]
        return missing

    def _get(self, collection: str, ids: list[str], fields: str) -> list[dict[str, Any]]:
        """Documents by id, committed or not (real-time get), read as the indexer."""
        params = [*(("id", i) for i in ids), ("fl", fields)]  # repeated id: ids may hold commas
        found = secured_search(self.solr, collection, "get", params, UserAccess.indexer(), timeout=120)
        if "doc" in found:  # Solr answers a single id with {"doc": …}
            return [found["doc"]] if found["doc"] else []
        return found.get("response", {}).get("docs", [])

    def _defer(self, parent_ids: list[str], results: dict[str | None, DocResult], reason: str) -> None:
        self.outbox.add(self.settings.collection_main, parent_ids, reason)
        for pid in parent_ids:
            if pid in results:
                results[pid].pending = True
                results[pid].error = f"chunks deferred: {reason}"

    # --- re-chunking parents already in FileShare (sync, reconcile, outbox) ---------------------

    def rechunk(self, parent_ids: list[str]) -> list[DocResult]:
        results: list[DocResult] = []
        for start in range(0, len(parent_ids), 100):
            batch = parent_ids[start : start + 100]
            present = {d["id"]: d for d in self._get(self.settings.collection_main, batch, "*")}
            gone = [pid for pid in batch if pid not in present]
            if gone:  # the parent vanished: its chunks go too
                self.delete_children(gone)
                self.outbox.remove(self.settings.collection_main, gone)
            by_id = {pid: DocResult(pid) for pid in present}
            usable = []
            for pid, doc in present.items():
                try:
                    _text(doc)
                    usable.append(doc)
                except DocumentError as exc:
                    by_id[pid].status, by_id[pid].error = "error", str(exc)
            if usable:
                self._write_chunks(usable, by_id, commit=True, within=None)
            results += by_id.values()
        return results

    # --- deleting -------------------------------------------------------------------------------

    def delete_children(self, parent_ids: list[str], commit: bool = False) -> None:
        for start in range(0, len(parent_ids), 500):
            batch = parent_ids[start : start + 500]
            query = "{!terms f=parent_doc separator='" + SEP + "'}" + SEP.join(batch)
            self.solr.post(
                f"{self.settings.collection_vector}/update",
                json={"delete": {"query": query}},
                params=self._params(commit, None),
                timeout=300,
            )

    def delete_ids(self, ids: list[str], commit: bool = False) -> int:
        if not ids:
            return 0
        self.solr.post(
            f"{self.settings.collection_main}/update",
            json={"delete": ids},
            params=self._params(commit, None),
            timeout=300,
        )
        self.delete_children(ids, commit)
        self.outbox.remove(self.settings.collection_main, ids)
        return len(ids)

    def delete_query(self, query: str, commit: bool = False) -> int:
        """Deletes the parents matching a Solr query, and their chunks."""
        ids = list(self.matching_ids(query))
        return self.delete_ids(ids, commit)

    def matching_ids(self, query: str, fields: str = "id") -> Iterator[str]:
        """Ids of FileShare documents matching ``query`` (the indexer's own read, paged)."""
        for doc in self.scan(self.settings.collection_main, query, fields):
            yield doc["id"]

    def scan(self, collection: str, query: str, fields: str) -> Iterator[dict[str, Any]]:
        cursor = "*"
        while True:
            params = [
                ("q", query),
                ("defType", "lucene"),
                ("fl", fields),
                ("rows", 1000),
                ("sort", "id asc"),
                ("cursorMark", cursor),
            ]
            found = secured_search(self.solr, collection, "select", params, UserAccess.indexer())
            yield from found["response"]["docs"]
            if found.get("nextCursorMark") in (None, cursor):
                return
            cursor = found["nextCursorMark"]
