"""Indexing a corpus through the indexer, in batches, with one progress bar over documents.

The one loop behind ``datafari-rag index``, the sample corpus of ``make run``, the evaluation
commands and the benchmarks: documents go in batches through :meth:`Indexer.add`, failures are
counted and named, and both collections are committed at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from .indexer import Indexer

# FileShare's processor embeds the chunks of a request's documents together: bigger requests keep
# the embedding service busy between them (each batch goes as two requests side by side).
BATCH = 128


@dataclass
class CorpusReport:
    added: int = 0
    chunks: int | None = 0  # None: written by FileShare's processor in Solr, not counted here
    failed: int = 0
    errors: list[str] = field(default_factory=list)  # "id: why", in order
    seconds: float = 0.0

    def progress(self, total: int | None) -> dict[str, Any]:
        """What a progress report says (the command's bar, a job's events and callbacks)."""
        done = self.added + self.failed
        percent = round(100.0 * done / total, 1) if total else None
        return {"percent": percent, "documents": done, "total": total, "chunks": self.chunks, "failed": self.failed}

    def line(self) -> str:
        chunks = "chunked in Solr" if self.chunks is None else f"{self.chunks} chunks"
        return f"indexed {self.added} documents ({chunks}), {self.failed} failed, in {self.seconds:.1f}s"


def index_documents(
    indexer: Indexer,
    documents: Iterable[dict[str, Any] | Exception],
    total: int | None = None,
    batch: int | None = None,
    progress: bool = True,
    on_error: Callable[[str], None] | None = None,
    on_progress: Callable[[CorpusReport], None] | None = None,
    report: CorpusReport | None = None,
) -> CorpusReport:
    """Indexes ``documents`` (an item that is an exception is a document that could not be read:
    counted as failed, named, and skipped) and commits both collections; ``on_progress`` hears
    the report after each batch. ``report``: what an earlier run of the same documents did (a
    resumed job), counted on from."""
    report = report or CorpusReport()
    batch = batch or BATCH
    began = time.monotonic()
    say = on_error or (tqdm.write if progress else (lambda _: None))
    pending: list[dict[str, Any]] = []
    with tqdm(total=total, unit="doc", desc="indexing", disable=not progress) as bar:

        def flush() -> None:
            for result in indexer.add(pending):
                if result.status == "ok":
                    report.added += 1
                    report.chunks = None if result.chunks is None else (report.chunks or 0) + result.chunks
                else:
                    report.failed += 1
                    report.errors.append(f"{result.id}: {result.error}")
                    say(f"error: {result.id}: {result.error}")
            bar.update(len(pending))
            pending.clear()
            told()

        def told() -> None:
            figures = report.progress(total)
            bar.set_postfix(
                chunks=figures["chunks"] if figures["chunks"] is not None else "in Solr", failed=report.failed
            )
            if on_progress is not None:
                on_progress(report)

        for doc in documents:
            if isinstance(doc, Exception):
                report.failed += 1
                report.errors.append(str(doc))
                say(f"error: {doc}")
                bar.update(1)
                told()
                continue
            pending.append(doc)
            if len(pending) >= batch:
                flush()
        if pending:
            flush()
    indexer.commit()
    report.seconds = time.monotonic() - began
    return report
