"""Shared helpers of the benchmarks: sample texts, a served agent, process memory."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from datafari_rag.config import Settings
from datafari_rag.paths import PROJECT_ROOT, SAMPLE_CORPUS
from datafari_rag.solr import SolrClient
from datafari_rag.testing.servers import served_process

SERVICES = ("inprocess", "openai")  # solr.embeddings.service values a benchmark can compare
SCIFACT = PROJECT_ROOT.parent / "shared" / "data" / "scifact" / "corpus.jsonl"


def sample_texts(count: int) -> list[str]:
    """SciFact abstracts (first 1,000 characters) when the evaluation data is there, else the sample corpus."""
    path = SCIFACT if SCIFACT.exists() else SAMPLE_CORPUS
    texts: list[str] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            texts.append(f"{doc.get('title', '')} {doc['text']}"[:1000])
            if len(texts) == count:
                break
    while len(texts) < count:
        texts += texts[: count - len(texts)]
    return texts


def texts_from_arguments(description: str | None) -> list[str]:
    """The texts of a benchmark that embeds: ``--texts N`` of :func:`sample_texts` (16 with ``--quick``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--texts", type=int, default=128)
    parser.add_argument("--quick", action="store_true", help="16 texts")
    args = parser.parse_args()
    return sample_texts(16 if args.quick else args.texts)


def search_arguments(
    description: str | None, requests: int, quick: int, parser: argparse.ArgumentParser | None = None
) -> tuple[argparse.Namespace, int, int]:
    """The options of a benchmark that searches SciFact in FileShare: ``--requests`` (``requests``),
    ``--docs`` (6,000 abstracts), ``--quick`` (``quick`` requests, 1,000 abstracts). ``parser``:
    one holding the benchmark's own options. Returns the options, the requests and the documents."""
    parser = parser or argparse.ArgumentParser(description=description)
    parser.add_argument("--requests", type=int, default=requests)
    parser.add_argument("--docs", type=int, default=6000, help="SciFact abstracts added to FileShare")
    parser.add_argument("--quick", action="store_true", help=f"{quick} requests, 1,000 documents")
    args = parser.parse_args()
    return args, *((quick, 1000) if args.quick else (args.requests, args.docs))


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children, in MB (from /proc)."""
    pids = [pid] + [int(p) for p in _children(pid)]
    total = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def solr_rss_mb(solr_url: str) -> float:
    """Resident memory of the local Solr node serving ``solr_url`` (found by its ``-DhostPort``), in MB."""
    port = solr_url.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[-1]
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if f"-DhostPort={port}".encode() in args:
            return rss_mb(int(cmdline.parent.name))
    raise LookupError(f"no local Solr process serves {solr_url}")


def _children(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


@contextmanager
def served_agent(port: int) -> Iterator[subprocess.Popen[bytes]]:
    """The agent as production runs it (gunicorn), on ``port``."""
    env = {**os.environ, "DATAFARI_RAG_AGENT_PORT": str(port)}
    args = ["datafari_rag.cli", "agent", "--port", str(port)]
    with served_process(args, f"http://127.0.0.1:{port}/health", env) as process:
        yield process


@contextmanager
def bench_stack(prefix: str = "bench_", **overrides: object) -> Iterator[tuple[Settings, SolrClient, str]]:
    """Solr (DATAFARI_RAG_SOLR_URL or a local node), the agent in its own process, the sample
    corpus indexed into ``bench_`` collections, with the default settings but ``overrides``
    (e.g. ``embeddings_service="openai"``). Yields (settings, solr client, agent URL)."""
    from datafari_rag.indexing.indexer import Indexer
    from datafari_rag.indexing.sample import index_sample
    from datafari_rag.solr.bootstrap import bootstrap
    from datafari_rag.solr.runtime import LocalSolr
    from datafari_rag.solr.security_json import write_config
    from datafari_rag.solr.service_account import credentials
    from datafari_rag.testing.servers import free_port

    node = None
    url = os.environ.get("DATAFARI_RAG_SOLR_URL")
    # the service account: DATAFARI_RAG_SOLR_USERNAME/PASSWORD with a given Solr, else made for this run
    account = Settings(
        solr_username=os.environ.get("DATAFARI_RAG_SOLR_USERNAME", ""),
        solr_password=os.environ.get("DATAFARI_RAG_SOLR_PASSWORD", "" if url else secrets.token_urlsafe(16)),
    )
    if not url:
        home = Path(tempfile.mkdtemp(prefix="datafari-rag-bench-"))
        node = LocalSolr(port=free_port(), home=home, security_json=write_config(account, home / "security.json"))
        node.start()  # secured, as `datafari-rag solr start` starts it
        url = node.url
    try:
        port = free_port()
        with served_agent(port):  # its own process, as in production
            agent = f"http://127.0.0.1:{port}"
            settings = account.replace(
                solr_url=url,
                collection_main=f"{prefix}FileShare",
                collection_vector=f"{prefix}VectorMain",
                embeddings_endpoint=f"{agent}/v1",
                **overrides,
            )
            solr = SolrClient(url, timeout=120, auth=credentials(settings))
            bootstrap(solr, settings)
            index_sample(Indexer.of(solr, settings))
            yield settings, solr, f"{agent}/v1"
    finally:
        if node is not None:
            node.stop()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


@dataclass
class Figure:
    """One figure of a benchmark, for the summary table of ``python -m bench``."""

    name: str
    value: float
    unit: str = ""
    target: str = ""  # e.g. ">= 0.8"; empty when the figure is informative only
    met: bool | None = None


RESULTS_ENV = "DATAFARI_RAG_BENCH_RESULTS"


def emit(bench: str, line: str, *figures: Figure) -> None:
    """Prints the benchmark's line; when run by ``python -m bench``, also records its figures."""
    print(line, flush=True)
    path = os.environ.get(RESULTS_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            for figure in figures:
                fh.write(json.dumps({"bench": bench, "line": line, **asdict(figure)}) + "\n")


def warm_solr(
    settings: Settings, solr: SolrClient, queries: list[str], bursts: int = 150, concurrency: int = 64
) -> None:
    """Brings a freshly started Solr JVM to steady state before a measurement.

    A new JVM spends several milliseconds of JIT compilation CPU per query, on 2 cores, for its
    first thousands of concurrent queries (measured per thread: the C2 compiler threads used
    5.7 ms per query over the first bursts after 2,500 sequential ones, 1.7 ms after 60 bursts).
    A production Solr has long finished that; a benchmark that compares a path through Solr with
    one that is not must not charge it to the first. The queries take the sidecar's own BM25 path.
    """
    from concurrent.futures import ThreadPoolExecutor

    from datafari_rag.retrieval import RetrievalContext
    from datafari_rag.retrieval.bm25 import bm25_documents
    from datafari_rag.security import UserAccess

    ctx = RetrievalContext.of(solr, settings, UserAccess.anonymous())
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for i in range(bursts):
            burst = [queries[i % len(queries)]] * concurrency
            list(pool.map(lambda q: bm25_documents(ctx, q, settings.max_files), burst))
