"""The chunk-and-embed indexer: FileShare documents in, their chunks (with vectors) in VectorMain.

In ``processor`` mode (``vector.embedding.mode``) it only writes and deletes parents in FileShare:
FileShare's update processor chunks and embeds in Solr, for this writer as for any other, and
a write whose chunks fail fails whole. In the other modes, for each added document it writes the
parent to FileShare, splits its ``exactContent``, writes one child per chunk to VectorMain
(embedded by Solr's update chain, or by the sidecar in batches), then deletes the children left
over from a longer earlier version. Deleting a parent,
by id or by query, deletes its children. Bad documents get a per-document error and the rest of
the batch goes through; if VectorMain or the embedding service fails once FileShare has the
parent, the parent goes to the outbox, and ``reconcile``/``sync`` finish the work later.
"""

from __future__ import annotations

import logging
import time
import unicodedata
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from ..config import Settings
from ..llm import LlmService
from ..solr import SolrClient, SolrError, admin, user_properties
from ..solr.collection import Collection
from ..text.language import with_language
from .children import child_documents, language_fields
from .chunker import chunk_text
from .chunkers import GIVEN_CHUNKS, chunk_document, custom
from .embedder import ChunkEmbedder, EmbeddingError
from .outbox import Outbox

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_ID_CHARS = 2048
ACL_FIELDS = tuple(f"{kind}_token_{level}" for kind in ("allow", "deny") for level in ("share", "parent", "document"))
CHILD_BATCH = 200
# In solr mode, VectorMain's update chain embeds one chunk at a time (in processor mode, FileShare's
# chain one document's chunks at a time); two update requests side by side keep two embedding
# calls (two cores of the agent) busy instead of one.
SOLR_MODE_POSTS = 2
# How long the indexer trusts what it last read of FileShare's processor switch (seconds).
PROCESSOR_CHECK_TTL = 10.0


class DocumentError(ValueError):
    """A document that cannot be indexed as it is."""


class ModeConflict(RuntimeError):
    """The sidecar would write chunks that FileShare's update processor writes too."""


def mode_conflict(settings: Settings, processor_on: bool) -> str | None:
    """Why the sidecar may not write chunks, or None. In ``processor`` mode the processor's
    ``vector.enabled`` is the switch and the sidecar writes no chunk; in the other modes the
    sidecar writes them, and the processor must be off, or both would chunk every parent (twice
    the chunks, two versions racing)."""
    mode = settings.vector_embedding_mode
    if mode == "processor" or not settings.vector_enabled or not processor_on:
        return None
    return (
        f"FileShare's update processor is on ({settings.collection_main}: vector.enabled=true) while "
        f"vector.embedding.mode={mode}: the chunks would be written twice. Set "
        "vector.embedding.mode=processor and run datafari-rag bootstrap, or turn the processor off "
        "with datafari-rag vector config vector.enabled=false."
    )


@dataclass
class DocResult:
    id: str | None
    status: str = "ok"  # "ok" | "error"
    chunks: int | None = 0  # None: counted by Solr's processor, not here
    pending: bool = False  # chunks not (all) written yet: in the outbox, finished by reconcile
    error: str | None = None
    code: int | None = None  # a failure's HTTP-like code: 400 the document's fault, 503 send it again

    def fail(self, error: str, code: int) -> None:
        self.status, self.error, self.code = "error", error, code

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None and (k != "pending" or v)}


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


def _with_language(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with its language (detected when the writer sent none) and, for French, its
    French-analysed copies."""
    text = _text(doc)
    doc = with_language(doc, text)
    return {**language_fields(doc, text), **doc}


def has_control_character(text: str) -> bool:
    return any(unicodedata.category(ch) == "Cc" for ch in text)


def _check_acl(doc: dict[str, Any]) -> None:
    """An ACL field that is present holds at least one token: a field set to null, [], "" or
    anything but strings would otherwise index the document as public (``__nosecurity__``).
    A field left out is public at that level, by design (ManifoldCF's default)."""
    for name in ACL_FIELDS:
        if name not in doc:
            continue
        value = doc[name]
        tokens = value if isinstance(value, list) else [value]
        if not tokens or not all(isinstance(t, str) and t.strip() and not has_control_character(t) for t in tokens):
            raise DocumentError(
                f"'{name}' must hold at least one token (a non-empty string, or a list of them); "
                "leave the field out for a document that is public at that level"
            )


def validate(doc: Any) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise DocumentError("a document must be a JSON object")
    doc_id = doc.get("id")
    if doc_id is None:
        raise DocumentError("the document has no 'id'")
    if not isinstance(doc_id, str) or not doc_id.strip() or len(doc_id) > MAX_ID_CHARS:
        raise DocumentError(f"'id' must be a non-empty string of at most {MAX_ID_CHARS} characters")
    if has_control_character(doc_id):
        raise DocumentError("'id' may not hold control characters")
    _check_utf8(doc)
    _check_acl(doc)
    _text(doc)
    return doc


class Indexer:
    """The indexing policy over two collections; built once per process (``Services``)."""

    def __init__(
        self, settings: Settings, main: Collection, vectors: Collection, outbox: Outbox, llm: LlmService | None = None
    ) -> None:
        self.settings = settings
        self.main = main
        self.vectors = vectors
        self.outbox = outbox
        self.llm = llm  # the proposition chunker and the chunk evaluator
        self._embedder: ChunkEmbedder | None = None
        self._processor_checked = -PROCESSOR_CHECK_TTL  # monotonic time of the last check

    @classmethod
    def of(cls, solr: SolrClient, settings: Settings, outbox: Outbox, llm: LlmService | None = None) -> Indexer:
        """An indexer over the collections the settings name, on ``solr``."""
        main, vectors = Collection(solr, settings.collection_main), Collection(solr, settings.collection_vector)
        return cls(settings, main, vectors, outbox, llm)

    def chunks(self, text: str) -> list[str]:
        """A document's chunks: ``vector.chunker``'s, after the evaluator when it is on."""
        if not custom(self.settings):
            return chunk_text(text, self.settings)
        if self.llm is None and (
            self.settings.vector_chunker == "proposition" or self.settings.vector_chunker_evaluator
        ):
            raise DocumentError("this chunker needs an LLM, and the indexer has none")
        report = chunk_document(text, self.settings, self.embedder.embed, self.llm)
        if report.rejected:
            log.info(
                "the chunk evaluator dropped %d of %d chunk(s)", report.rejected, report.rejected + len(report.chunks)
            )
        return report.chunks

    @property
    def in_solr(self) -> bool:
        """FileShare's update processor chunks and embeds; this indexer writes parents only."""
        return self.settings.vector_embedding_mode == "processor"

    def check_single_writer(self) -> None:
        """Refuses to write chunks while FileShare's processor writes them (:func:`mode_conflict`);
        the processor's switch is read again at most every PROCESSOR_CHECK_TTL seconds."""
        if mode_conflict(self.settings, processor_on=True) is None:
            return  # whatever the processor does, nothing can clash
        if time.monotonic() - self._processor_checked < PROCESSOR_CHECK_TTL:
            return
        reason = mode_conflict(self.settings, user_properties.processor_on(self.main.solr, self.main.name))
        if reason:
            raise ModeConflict(reason)
        self._processor_checked = time.monotonic()

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
                results.append(
                    DocResult(raw_id if isinstance(raw_id, str) else None, "error", error=str(exc), code=400)
                )
        by_id = {r.id: r for r in results if r.status == "ok"}
        if self.in_solr:  # FileShare's language step labels the documents, as for any writer
            for result in by_id.values():
                result.chunks = None
            if custom(self.settings) and self.settings.vector_enabled:  # the sidecar cuts, Solr's processor embeds
                valid = self._with_chunks(valid, by_id)
            # Solr embeds each document's chunks in one call, while the previous document's wait:
            # requests side by side keep the embedding service's cores busy.
            # (a document sent twice stays in one request, in order: the last write wins)
            groups: list[list[dict[str, Any]]] = [[] for _ in range(SOLR_MODE_POSTS)]
            for doc in valid:
                groups[zlib.crc32(doc["id"].encode()) % SOLR_MODE_POSTS].append(doc)
            with ThreadPoolExecutor(max_workers=SOLR_MODE_POSTS, thread_name_prefix="fileshare-update") as pool:
                done = [pool.submit(self._write_parents, g, by_id, False, commit_within) for g in groups if g]
            for future in done:
                future.result()
            if commit:
                self._resent("a commit", self.main.commit)
            return results
        valid = [_with_language(doc) for doc in valid]
        if valid:
            self.check_single_writer()
        if self.settings.vector_enabled and valid:  # intent first: a crash from here on leaves a trace
            self.outbox.add(self.main.name, [d["id"] for d in valid], "being written")
        accepted = self._write_parents(valid, by_id, commit, commit_within)
        if accepted and self.settings.vector_enabled:
            written = self._write_chunks(accepted, by_id, commit, commit_within)
            self._settle(written, by_id)
        rejected = [d["id"] for d in valid if by_id[d["id"]].status == "error"]
        self.outbox.remove(self.main.name, rejected)  # FileShare refused them: nothing to finish
        return results

    def _resent(self, what: str, send: Callable[[], T]) -> T:
        """``send()``, sent again while Solr answers 500/503 — the embedding service or a node
        busy, a shard's leader being replaced, a node reconnecting to ZooKeeper ("updates are
        disabled") — up to index.retry.attempts times, index.retry.delay seconds doubling."""
        delay = self.settings.index_retry_delay
        for attempt in range(self.settings.index_retry_attempts + 1):
            try:
                return send()
            except SolrError as exc:
                if exc.status not in (500, 503) or attempt == self.settings.index_retry_attempts:
                    raise
                log.warning("FileShare answered %s to %s: sent again in %g s", exc.status, what, delay)
                time.sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")

    def commit(self) -> None:
        """Commits both collections, each sent again while Solr is busy (like a batch)."""
        self._resent("a commit", self.main.commit)
        self._resent("a commit of the chunks", self.vectors.commit)

    def _with_chunks(self, docs: list[dict[str, Any]], results: dict[str | None, DocResult]) -> list[dict[str, Any]]:
        """Processor mode with a chunker of the sidecar's: each parent carries its chunks for Solr's
        processor to embed as they are; a document whose chunks cannot be made gets its error."""
        out = []
        for doc in docs:
            try:
                chunks = self.chunks(_text(doc))
            except (DocumentError, EmbeddingError) as exc:
                results[doc["id"]].fail(f"not chunked: {exc}", 400 if isinstance(exc, DocumentError) else 503)
                continue
            results[doc["id"]].chunks = len(chunks)
            out.append({**doc, GIVEN_CHUNKS: chunks})
        return out

    def _write_parents(
        self, docs: list[dict[str, Any]], results: dict[str | None, DocResult], commit: bool, within: int | None
    ) -> list[dict[str, Any]]:
        if not docs:
            return []
        try:
            versions = self._resent(f"{len(docs)} documents", lambda: self.main.add(docs, commit, within))
            return [{**doc, "_version_": versions.get(doc["id"])} for doc in docs]
        except SolrError:
            pass
        accepted = []  # one bad document fails Solr's whole batch: find which, keep the others
        for doc in docs:
            try:
                versions = self.main.add([doc], commit, within)
                accepted.append({**doc, "_version_": versions.get(doc["id"])})
            except SolrError as exc:  # Solr's 400: the document; anything else: the service, send it again
                results[doc["id"]].fail(str(exc), 400 if exc.status == 400 else 503)
        return accepted

    def _write_chunks(
        self, parents: list[dict[str, Any]], results: dict[str | None, DocResult], commit: bool, within: int | None
    ) -> dict[str, int | None]:
        """Writes the chunks of ``parents`` (each with its ``_version_``), then deletes the chunks of
        every other version of them; returns the version each parent's chunks were written from
        (the parents whose chunks failed are deferred to the outbox and left out)."""
        children: list[dict[str, Any]] = []
        counts: dict[str, int] = {}
        for parent in parents:
            kids = child_documents(parent, self.chunks(_text(parent)))
            counts[parent["id"]] = len(kids)
            children += kids
            if parent["id"] in results:
                results[parent["id"]].chunks = len(kids)
        ids = list(counts)
        sidecar = self.settings.vector_embedding_mode == "sidecar"
        try:
            if sidecar:
                self._embed_and_post_children(children, within)
            else:
                self._post_children(children, within)
            self._delete_other_versions(parents, counts)
            if commit:
                self.vectors.commit()
            missing = [] if sidecar else self._without_vector(children)
        except (SolrError, EmbeddingError) as exc:
            kind = "the embedding service" if isinstance(exc, EmbeddingError) else "the vector collection"
            self._defer(ids, results, f"{kind} failed", str(exc))
            return {}
        failed = sorted({child_id.rsplit("_", 1)[0] for child_id in missing})
        if failed:
            self._defer(failed, results, f"the embedding failed for {len(missing)} chunk(s)", "has_vector=false")
        done = [i for i in ids if i not in failed]
        self.outbox.remove(self.main.name, done)
        versions = {p["id"]: p.get("_version_") for p in parents}
        return {pid: versions[pid] for pid in done}

    def _delete_other_versions(self, parents: list[dict[str, Any]], counts: dict[str, int]) -> None:
        """Deletes every chunk of these parents not written from the version just written: those of
        an earlier, longer version, and those a concurrent writer of an older version left. Each
        parent is named by exact term (never through query syntax)."""
        also = {}
        for parent in parents:
            version = parent.get("_version_")
            also[parent["id"]] = (
                f"*:* -parent_version:{int(version)}" if version else f"chunk_index:[{counts[parent['id']]} TO *]"
            )
        self.vectors.delete_by_terms("parent_doc", counts, also=also)

    def _settle(self, written: dict[str, int | None], results: dict[str | None, DocResult], rounds: int = 3) -> None:
        """Last write wins for parent and chunks together: when another writer changed a parent while
        its chunks were being written, the chunks of its current version are written (again), until
        the chunks match the parent. What is still moving after ``rounds`` stays in the outbox."""
        for _ in range(rounds):
            ids = [pid for pid, version in written.items() if version is not None]
            if not ids:
                return
            current = {d["id"]: d.get("_version_") for d in self.main.get(ids, "id,_version_")}
            gone = [pid for pid in ids if pid not in current]
            if gone:  # deleted meanwhile: its chunks go too
                self.delete_children(gone)
            moved = [pid for pid in ids if pid in current and current[pid] != written[pid]]
            if not moved:
                return
            self.outbox.add(self.main.name, moved, "changed while its chunks were written")
            # only the documents that moved are read whole, and only now
            written = self._write_chunks(self.main.get(moved, "*"), results, commit=False, within=None)

    def _embed_and_post_children(self, children: list[dict[str, Any]], within: int | None) -> None:
        """Sidecar mode: each batch of chunks is written as soon as its vectors come back, while
        the embedding service computes the next ones."""
        size = self.embedder.batch
        field = self.settings.vector_field
        vectors = self.embedder.batches([c["embedded_content"] for c in children])
        for start, batch_vectors in zip(range(0, len(children), size), vectors, strict=True):
            batch = children[start : start + size]
            for child, vector in zip(batch, batch_vectors, strict=True):
                child[field], child["has_vector"] = vector, True
            self.vectors.add(batch, within=within, timeout=600)

    def _post_children(self, children: list[dict[str, Any]], within: int | None) -> None:
        """Solr mode: VectorMain's update chain embeds one chunk at a time, so the chunks go in
        SOLR_MODE_POSTS requests side by side. The first failure is raised once all have ended."""
        size = max(1, min(CHILD_BATCH, -(-len(children) // SOLR_MODE_POSTS)))
        batches = [children[start : start + size] for start in range(0, len(children), size)]
        with ThreadPoolExecutor(max_workers=SOLR_MODE_POSTS, thread_name_prefix="vector-update") as pool:
            futures = [pool.submit(self.vectors.add, batch, False, within, 600) for batch in batches]
        for future in futures:
            future.result()

    def _without_vector(self, children: list[dict[str, Any]]) -> list[str]:
        """Chunks Solr indexed without a vector (the text-to-vector processor only logs failures).
        VectorMain routes on ``parent_doc``: the gets ask every shard."""
        ids = [child["id"] for child in children]
        shards = admin.shard_names(self.vectors.solr, self.vectors.name) if ids else []
        missing: list[str] = []
        for start in range(0, len(ids), CHILD_BATCH):
            docs = self.vectors.get(ids[start : start + CHILD_BATCH], "id,has_vector", shards)
            missing += [d["id"] for d in docs if d.get("has_vector") is False]
        return missing

    def _defer(self, parent_ids: list[str], results: dict[str | None, DocResult], reason: str, detail: str) -> None:
        """The parents go to the outbox with the whole story; the caller is told what failed, in
        words that name no internal address."""
        self.outbox.add(self.main.name, parent_ids, f"{reason}: {detail}")
        log.warning("chunks of %d parent(s) deferred to the outbox: %s: %s", len(parent_ids), reason, detail)
        for pid in parent_ids:
            if pid in results:
                results[pid].pending = True
                results[pid].error = f"chunks deferred: {reason}"

    # --- re-chunking parents already in FileShare (sync, reconcile, outbox) ---------------------

    def rechunk(self, parent_ids: list[str]) -> list[DocResult]:
        if self.in_solr:
            return self._resend(parent_ids)
        self.check_single_writer()
        results: list[DocResult] = []
        for start in range(0, len(parent_ids), 100):
            batch = parent_ids[start : start + 100]
            present = {d["id"]: d for d in self.main.get(batch, "*")}
            gone = [pid for pid in batch if pid not in present]
            if gone:  # the parent vanished: its chunks go too
                self.delete_children(gone)
                self.outbox.remove(self.main.name, gone)
            by_id = {pid: DocResult(pid) for pid in present}
            usable = []
            for pid, doc in present.items():
                try:
                    _text(doc)
                    usable.append(doc)
                except DocumentError as exc:
                    by_id[pid].fail(str(exc), 400)
            if usable:
                self._settle(self._write_chunks(usable, by_id, commit=True, within=None), by_id)
            results += by_id.values()
        return results

    def _resend(self, parent_ids: list[str]) -> list[DocResult]:
        """Processor mode: each parent is written again as FileShare stores it, so that Solr's
        processor chunks and embeds it (one chunker for every path)."""
        results: list[DocResult] = []
        for start in range(0, len(parent_ids), 100):
            batch = parent_ids[start : start + 100]
            stored = [
                {k: v for k, v in doc.items() if k not in ("_version_", "_root_")} for doc in self.main.get(batch, "*")
            ]
            gone = sorted(set(batch) - {d["id"] for d in stored})
            if gone:  # the parent vanished: its chunks go too
                self.delete_children(gone)
            self.outbox.remove(self.main.name, gone)
            results += self.add(stored, commit=True)
        return results

    # --- deleting -------------------------------------------------------------------------------

    def delete_children(self, parent_ids: list[str], commit: bool = False) -> None:
        self.vectors.delete_by_terms("parent_doc", parent_ids, commit)

    def delete_ids(self, ids: list[str], commit: bool = False) -> int:
        if not ids:
            return 0
        self.main.delete_ids(ids, commit)
        if not self.in_solr:
            self.delete_children(ids, commit)
        self.outbox.remove(self.main.name, ids)
        return len(ids)

    def delete_query(self, query: str, commit: bool = False) -> int:
        """Deletes the parents matching a Solr query, and their chunks. Like Solr's own delete by
        query, it sees documents added but not yet committed: FileShare is committed first, so the
        search that finds the parents (and so their chunks) sees every add acknowledged so far."""
        self._resent("a commit", self.main.commit)
        return self.delete_ids([d["id"] for d in self.main.scan(query, "id")], commit)
