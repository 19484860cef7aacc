"""The sidecar's writer: documents validated, then forwarded to FileShare, whose update processor
chunks and embeds them in Solr — the only chunk writer, for this writer as for any other.

Bad documents get a per-document error and the rest of the batch goes through; a write whose
chunks fail fails whole in Solr (503), and is sent again while Solr is busy. Chunkers that need
the LLM or the embedding model (semantic, proposition, the chunk evaluator) cut here: the parent
carries its chunks (``rag_chunks``), which the processor embeds and writes as they are. Deleting
a parent, by id or by query, deletes its chunks (the processor again). ``rechunk`` writes parents
again as FileShare stores them, for ``sync`` and ``reconcile``.
"""

from __future__ import annotations

import logging
import re
import time
import unicodedata
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from .. import chunk_fields
from ..config import Settings
from ..config.indexing import IndexingSettings
from ..llm import LlmService
from ..solr import SolrClient, SolrError
from ..solr.collection import Collection
from .chunkers import chunk_document, custom
from .embedder import ChunkEmbedder, EmbeddingError

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_ID_CHARS = 2048
ACL_FIELDS = tuple(f"{kind}_token_{level}" for kind in ("allow", "deny") for level in ("share", "parent", "document"))
# FileShare's processor embeds each request's chunks in one call, while the other request's wait:
# two update requests side by side keep two embedding calls (two cores of the agent) busy.
PARALLEL_POSTS = 2
# Solr's processor failing because its call to the embedding service outlived the model's timeout
EMBEDDING_TIMED_OUT = re.compile(r"Could not embed.*(timed? ?out|TimeoutException)", re.I | re.S)


class DocumentError(ValueError):
    """A document that cannot be indexed as it is."""


@dataclass
class DocResult:
    id: str | None
    status: str = "ok"  # "ok" | "error"
    chunks: int | None = None  # None: cut by Solr's processor, not counted here
    error: str | None = None
    code: int | None = None  # a failure's HTTP-like code: 400 the document's fault, 503 send it again

    def fail(self, error: str, code: int) -> None:
        self.status, self.error, self.code = "error", error, code

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


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


@dataclass(frozen=True)
class IndexerParams:
    """What the indexer reads of the configuration: the indexing section, and the embedding
    service's limits it names when Solr's embedding calls time out."""

    indexing: IndexingSettings
    embeddings_timeout: int
    embeddings_max_retries: int

    @classmethod
    def of(cls, settings: Settings) -> IndexerParams:
        return cls(settings.part(IndexingSettings), settings.embeddings_timeout, settings.embeddings_max_retries)


class Indexer:
    """The writer over FileShare (and VectorMain, for deleting chunks); one per process (``Services``)."""

    def __init__(
        self,
        params: IndexerParams,
        main: Collection,
        vectors: Collection,
        embedder: Callable[[], ChunkEmbedder],
        llm: LlmService | None = None,
    ) -> None:
        self.params = params
        self.main = main
        self.vectors = vectors
        self.llm = llm  # the proposition chunker and the chunk evaluator
        self._make_embedder = embedder  # the chunks' model, made when a chunker first needs it
        self._embedder: ChunkEmbedder | None = None

    @property
    def settings(self) -> IndexingSettings:
        """How it cuts and retries (the indexing section of its settings)."""
        return self.params.indexing

    @classmethod
    def of(
        cls,
        solr: SolrClient,
        settings: Settings,
        llm: LlmService | None = None,
        main: Collection | None = None,
        vectors: Collection | None = None,
    ) -> Indexer:
        """An indexer writing where and cutting as ``settings`` say, on ``solr`` (or on ``main`` and
        ``vectors``), given only its own part of them."""
        main = main or Collection(solr, settings.collection_main)
        vectors = vectors or Collection(solr, settings.collection_vector)
        return cls(IndexerParams.of(settings), main, vectors, lambda: ChunkEmbedder(settings), llm)

    def chunks(self, text: str) -> list[str]:
        """A document's chunks by ``vector.chunker`` (not the recursive one: Solr's processor cuts
        those), after the evaluator when it is on."""
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
    def embedder(self) -> ChunkEmbedder:
        if self._embedder is None:
            self._embedder = self._make_embedder()
        return self._embedder

    # --- adding -------------------------------------------------------------------------------

    def add(self, docs: list[Any], commit: bool = False, commit_within: int | None = None) -> list[DocResult]:
        """Writes the parents to FileShare, whose processor writes their chunks; one result per document."""
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
        if custom(self.settings) and self.settings.vector_enabled:  # the sidecar cuts, Solr's processor embeds
            valid = self._with_chunks(valid, by_id)
        # Solr embeds a request's chunks in one call, while the other request's wait: requests side
        # by side keep the embedding service's cores busy (a document sent twice stays in one
        # request, in order: the last write wins).
        groups: list[list[dict[str, Any]]] = [[] for _ in range(PARALLEL_POSTS)]
        for doc in valid:
            groups[zlib.crc32(doc["id"].encode()) % PARALLEL_POSTS].append(doc)
        with ThreadPoolExecutor(max_workers=PARALLEL_POSTS, thread_name_prefix="fileshare-update") as pool:
            done = [pool.submit(self._write_parents, g, by_id, commit_within) for g in groups if g]
        for future in done:
            future.result()
        if commit:
            self._resent("a commit", self.main.commit)
        return results

    def _resent(self, what: str, send: Callable[[], T]) -> T:
        """``send()``, sent again while Solr answers 500/503/510 — the embedding service or a node
        busy, a shard's leader being replaced, a node reconnecting to ZooKeeper ("updates are
        disabled"), a replica that froze under a distributed update — up to index.retry.attempts
        times, index.retry.delay seconds doubling."""
        delay = self.settings.index_retry_delay
        for attempt in range(self.settings.index_retry_attempts + 1):
            try:
                return send()
            except SolrError as exc:
                if exc.status not in (500, 503, 510) or attempt == self.settings.index_retry_attempts:
                    raise
                log.warning("FileShare answered %s to %s: sent again in %g s", exc.status, what, delay)
                time.sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")

    def commit(self) -> None:
        """Commits FileShare (its processor commits VectorMain first), sent again while Solr is busy."""
        self._resent("a commit", self.main.commit)

    def _with_chunks(self, docs: list[dict[str, Any]], results: dict[str | None, DocResult]) -> list[dict[str, Any]]:
        """Each parent carries the chunks of the sidecar's chunker for Solr's processor to embed as
        they are; a document whose chunks cannot be made gets its error."""
        out = []
        for doc in docs:
            try:
                chunks = self.chunks(_text(doc))
            except (DocumentError, EmbeddingError) as exc:
                results[doc["id"]].fail(f"not chunked: {exc}", 400 if isinstance(exc, DocumentError) else 503)
                continue
            results[doc["id"]].chunks = len(chunks)
            out.append({**doc, chunk_fields.GIVEN_CHUNKS: chunks})
        return out

    def _write_parents(
        self, docs: list[dict[str, Any]], results: dict[str | None, DocResult], within: int | None
    ) -> None:
        try:
            self._resent(f"{len(docs)} documents", lambda: self.main.add(docs, False, within))
            return
        except SolrError as exc:
            if len(docs) == 1:  # nothing to tell apart: sending it alone again would wait as long again
                results[docs[0]["id"]].fail(self._explained(str(exc)), 400 if exc.status == 400 else 503)
                return
        for doc in docs:  # one bad document fails Solr's whole batch: find which, keep the others
            try:
                self.main.add([doc], False, within)
            except SolrError as exc:  # Solr's 400: the document; anything else: the service, send it again
                results[doc["id"]].fail(self._explained(str(exc)), 400 if exc.status == 400 else 503)

    def _explained(self, message: str) -> str:
        """Solr's message, and the settings to change when its embedding calls timed out."""
        if not EMBEDDING_TIMED_OUT.search(message):
            return message
        s = self.params
        return (
            f"{message} — the embedding service did not answer within solr.embeddings.timeout "
            f"({s.embeddings_timeout} s), {s.embeddings_max_retries + 1} time(s) (solr.embeddings.maxRetries = "
            f"{s.embeddings_max_retries}): raise them, or give the service more capacity"
        )

    # --- writing again parents already in FileShare (sync, reconcile) ---------------------------

    def rechunk(self, parent_ids: list[str]) -> list[DocResult]:
        """Each parent is written again as FileShare stores it, so that Solr's processor chunks and
        embeds it again; the chunks of a parent that vanished are deleted."""
        results: list[DocResult] = []
        for start in range(0, len(parent_ids), 100):
            batch = parent_ids[start : start + 100]
            stored = [
                {k: v for k, v in doc.items() if k not in ("_version_", "_root_")} for doc in self.main.get(batch, "*")
            ]
            gone = sorted(set(batch) - {d["id"] for d in stored})
            if gone:
                self.delete_children(gone)
            results += self.add(stored, commit=True)
        return results

    # --- deleting -------------------------------------------------------------------------------

    def delete_children(self, parent_ids: list[str], commit: bool = False) -> None:
        self.vectors.delete_by_terms(chunk_fields.PARENT, parent_ids, commit)

    def delete_ids(self, ids: list[str], commit: bool = False) -> int:
        """Deletes parents by id; FileShare's processor deletes their chunks."""
        if not ids:
            return 0
        self.main.delete_ids(ids, commit)
        return len(ids)

    def delete_query(self, query: str, commit: bool = False) -> int:
        """Deletes the parents matching a Solr query, and their chunks. Like Solr's own delete by
        query, it sees documents added but not yet committed: FileShare is committed first."""
        self._resent("a commit", self.main.commit)
        return self.delete_ids([d["id"] for d in self.main.scan(query, "id")], commit)
