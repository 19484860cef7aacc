"""``datafari-rag eval retrieval``: nDCG@10, Recall@100 and MRR@10 of each retrieval mode.

The corpus of a BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``) is indexed
through the real indexer into collections of its own (never FileShare/VectorMain), then every
test query runs in each mode; chunk hits count for their parent document. Metrics come from
``ir-measures`` (the TREC tools' definitions).
"""

from __future__ import annotations

import csv
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import ir_measures
from ir_measures import RR, R, nDCG
from tqdm import tqdm

from ..config import Settings
from ..indexing.corpus import index_documents
from ..indexing.embedder import ChunkEmbedder
from ..llm import LlmService
from ..llm.embeddings import EmbeddingError
from ..llm.service import LlmError
from ..paths import var_dir
from ..rag.query_enhancement import enhance
from ..rag.query_params import QueryParams
from ..registry import RETRIEVAL_MODES
from ..retrieval import RetrievalContext, Snippet, retrieve, retrieve_all
from ..retrieval.rerank import Reranker
from ..retrieval.rerankers import RerankError
from ..security import UserAccess
from ..services import Services
from ..solr import SolrClient, SolrError
from ..solr.bootstrap import bootstrap
from . import EvaluationInputError, missing_field, read_jsonl

log = logging.getLogger(__name__)
MEASURES = [nDCG @ 10, R @ 100, RR @ 10]
DEPTH = 100
# a query these stop (a service timing out on a busy machine) scores 0 and is counted; the run goes on
QUERY_FAILURES = (SolrError, EmbeddingError, LlmError, RerankError)


@dataclass
class Beir:
    corpus: list[dict[str, Any]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def load_beir(folder: Path, split: str = "test") -> Beir:
    corpus = read_jsonl(folder / "corpus.jsonl")
    queries_file, qrels_file = folder / "queries.jsonl", folder / "qrels" / f"{split}.tsv"
    try:
        queries = {str(q["_id"]): q["text"] for q in read_jsonl(queries_file)}
    except KeyError as exc:
        raise missing_field(queries_file, exc) from exc
    if not qrels_file.is_file():
        raise EvaluationInputError(f"{qrels_file} is missing")
    qrels: dict[str, dict[str, int]] = {}
    with qrels_file.open(encoding="utf-8", newline="") as fh:
        try:
            for row in csv.DictReader(fh, delimiter="\t"):
                qrels.setdefault(row["query-id"].strip(), {})[row["corpus-id"].strip()] = int(row["score"])
        except (KeyError, AttributeError, TypeError, ValueError) as exc:
            raise EvaluationInputError(
                f"{qrels_file}: expected the columns query-id, corpus-id, score ({exc!r})"
            ) from exc
    return Beir(corpus, {q: queries[q] for q in qrels if q in queries}, qrels)


def fingerprint(corpus: list[dict[str, Any]]) -> str:
    """What the corpus holds (every id, title and text), not only how many documents."""
    digest = hashlib.sha256()
    for doc in sorted(corpus, key=lambda d: str(d["_id"])):
        for part in (str(doc["_id"]), doc.get("title") or "", doc.get("text") or ""):
            digest.update(part.encode("utf-8") + b"\x1f")
    return digest.hexdigest()


def indexed_as(services: Services, corpus: list[dict[str, Any]]) -> str:
    """The corpus's fingerprint and what decides its vectors: the embedding model and the chunking
    (collections indexed with another model must not be reused)."""
    s = services.settings
    how = [s.embeddings_model_name, s.vector_chunk_size, s.vector_chunk_unit, s.vector_max_overlap, s.vector_splitter]
    return fingerprint(corpus) + ":" + ",".join(map(str, how))


def _marker(services: Services) -> Path:
    return var_dir() / "eval" / f"{services.settings.collection_main}.fingerprint"


def index_corpus(services: Services, corpus: list[dict[str, Any]], reindex: bool = False) -> None:
    """Indexes BEIR corpus records (``_id``, ``title``, ``text``) unless the collections already hold
    exactly them: the same number of documents *and* the fingerprint recorded when they were indexed
    (which names the embedding model and the chunking too)."""
    bootstrap(services.solr, services.settings)
    marker, wanted = _marker(services), indexed_as(services, corpus)
    same = marker.is_file() and marker.read_text().strip() == wanted
    if services.main.count() == len(corpus) and same and not reindex:
        return
    marker.unlink(missing_ok=True)  # from here on, the collections hold something else until done
    services.indexer.delete_query("*:*", commit=True)
    docs = (
        {
            "id": str(d["_id"]),
            "title": d.get("title") or "",
            "url": str(d["_id"]),
            "exactContent": d.get("text") or d.get("title") or "",
        }
        for d in corpus
    )
    report = index_documents(services.indexer, docs, total=len(corpus), batch=64)
    if report.failed:
        raise RuntimeError(f"{report.failed} documents not indexed, e.g. {report.errors[0]}")
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(wanted)


def _by_parent(hits: list[Snippet]) -> dict[str, float]:
    """Document-level run: each parent scored by its best chunk."""
    run: dict[str, float] = {}
    for hit in hits:
        run[hit.id] = max(run.get(hit.id, float("-inf")), hit.score)
    return run


def _ranked(hits: list[Snippet]) -> list[Snippet]:
    """Scores by position: reranked passages and the ones after them have scores of two scales."""
    return [replace(x, score=float(len(hits) - i)) for i, x in enumerate(hits)]


def _deep(ctx: RetrievalContext, mode: str) -> RetrievalContext:
    """The context of one retrieval mode, ``DEPTH`` deep, on documents' whole text."""
    return replace(ctx, params=ctx.params.deep(mode, DEPTH))


def _plain(ctx: RetrievalContext, mode: str) -> Callable[[str], list[Snippet]]:
    """A mode as the RAG pipeline's retriever runs it, ``DEPTH`` deep."""
    deep = _deep(ctx, mode)
    return lambda query: retrieve(deep, query)


def _enhanced(ctx: RetrievalContext, s: Settings, mode: str, llm: LlmService) -> Callable[[str], list[Snippet]]:
    """A mode with query enhancement (``s``'s ``query.*``), as the RAG pipeline runs it, ``DEPTH`` deep."""
    deep = _deep(ctx, mode)
    q = QueryParams.of(s, mode)

    def run(query: str) -> list[Snippet]:
        enhanced = enhance(llm, q, deep, query, [query])
        searched = replace(deep, restrict=enhanced.restrict, dense=enhanced.dense)
        return retrieve_all(searched, enhanced.queries, query, min_votes=q.multi_query_min_votes).snippets

    return run


def retrievers(
    ctx: RetrievalContext, settings: Settings, reranker: Reranker | None = None, llm: LlmService | None = None
) -> dict[str, Callable[[str], dict[str, float]]]:
    enhanced = llm is not None and QueryParams.of(settings).enhancing
    found = {
        mode: _enhanced(ctx, settings, mode, llm) if llm is not None and enhanced else _plain(ctx, mode)
        for mode in RETRIEVAL_MODES.names
    }

    def scored(search: Callable[[str], list[Snippet]]) -> Callable[[str], dict[str, float]]:
        if reranker is None:
            return lambda q: _by_parent(search(q))
        return lambda q: _by_parent(_ranked(reranker.rerank(q, search(q)).snippets))

    return {mode: scored(search) for mode, search in found.items()}


def evaluate(
    solr: SolrClient,
    settings: Settings,
    beir: Beir,
    modes: list[str],
    reranker: Reranker | None = None,
    llm: LlmService | None = None,
) -> dict[str, dict[str, Any]]:
    """Each mode over the test queries; with ``llm``, query enhancement (``query.*``) as in RAG."""
    ctx = replace(RetrievalContext.of(solr, settings, UserAccess.anonymous()), embed=ChunkEmbedder(settings).embed)
    available = retrievers(ctx, settings, reranker, llm)
    results: dict[str, dict[str, Any]] = {}
    for mode in modes:
        run: dict[str, dict[str, float]] = {}
        failed: list[str] = []
        began = time.perf_counter()
        for qid, text in tqdm(beir.queries.items(), unit="query", desc=mode):
            try:
                run[qid] = available[mode](text)
            except QUERY_FAILURES as exc:
                failed.append(f"{qid}: {exc}")
                log.warning("%s: query %s failed, scored 0: %s", mode, qid, exc)
        seconds = time.perf_counter() - began
        if len(failed) == len(beir.queries):
            raise EvaluationInputError(f"{mode}: every query failed, e.g. {failed[0]}")
        # only the judgements of the queries asked: a query cut by --max-queries must not count as 0
        judged = {qid: beir.qrels[qid] for qid in beir.queries if qid in beir.qrels}
        scores = ir_measures.calc_aggregate(MEASURES, judged, run)
        results[mode] = {
            "nDCG@10": scores[nDCG @ 10],
            "Recall@100": scores[R @ 100],
            "MRR@10": scores[RR @ 10],
            "queries/s": len(beir.queries) / seconds,
            "queries": len(beir.queries),
            "failed": len(failed),
            "first failure": failed[0] if failed else None,
        }
    return results


def table(results: dict[str, dict[str, Any]]) -> str:
    lines = [f"{'mode':<8} {'nDCG@10':>8} {'Recall@100':>10} {'MRR@10':>8} {'queries/s':>10}"]
    for mode, r in results.items():
        lines.append(
            f"{mode:<8} {r['nDCG@10']:>8.3f} {r['Recall@100']:>10.3f} {r['MRR@10']:>8.3f} {r['queries/s']:>10.1f}"
        )
    for mode, r in results.items():
        if r.get("failed"):
            lines.append(f"{mode}: {r['failed']} of {r['queries']} queries failed, scored 0 ({r['first failure']})")
    return "\n".join(lines)
