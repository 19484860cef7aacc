"""How filtered kNN, BM25 and indexing costs grow with the index (``make bench SCALE=1``; not in
``make bench``'s default list, nor in ``make test``).

Synthetic chunks go straight into VectorMain (the vector write path: a chunk that carries its
vector is not embedded again) at growing sizes. Their vectors are drawn from the real model's
distribution: bge-small-en-v1.5 embeds SciFact passages, and each chunk is one of them plus
Gaussian noise, normalised (a cloud around every real passage, as chunks of similar documents
are). Their texts are words of that passage, for BM25. Each chunk is readable by nested groups
(``all``; one of 10 ``c*``; one of 100 ``d*``; one of 1,000 ``p*``), so a user holding one group
may read 100 %, 10 %, 1 % or 0.1 % of the index, through the same two filters as any search
(the sidecar's ``fq`` with the user's tokens, Solr's ``{!manifoldCFSecurity}``).

At each size and selectivity: p50/p99 of kNN as the product asks it (VectorMain's ``/vector``
with the query's text, ``topK=10``, every ``fq`` an HNSW pre-filter; Solr's in-process model
embeds each text on its first search, timed once, and keeps its vector for the others, so the
table times the search itself), the graph explored for 10 candidates (``efSearch=10``: the
handler before it took ``efSearch``), 50 and 100 (its default now) — each query with each value
in turn — and recall@10 against the exact top 10 under the same filter (computed with numpy
from the vectors written, embedded by the same model); p50 of BM25 (edismax) under the same
filter; the write rate; Solr's heap after the searches and the index's
size on disk. Prints one line per size and the table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import numpy as np
import requests

from bench.common import SCIFACT, Figure, emit, percentile, sample_texts
from datafari_rag.agent.onnx_model import BGE_SMALL, OnnxEmbedder
from datafari_rag.config import Settings
from datafari_rag.security import UserAccess
from datafari_rag.security.acl import acl_params
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.solr.search import FORM
from datafari_rag.solr.service_account import credentials

SELECTIVITIES = {"100%": "all", "10%": "c0", "1%": "d0", "0.1%": "p0"}  # the group that reads that share
DIMENSION = 384
NOISE = 0.03  # per coordinate: a chunk's cosine to its passage is about 0.85
BATCH = 2000
EF_SEARCH = (10, 50, 100)  # candidates the graph is explored for: topK (before), wider (the handler's default)
JSON = {"Content-Type": "application/json"}


def groups(buckets: np.ndarray) -> list[list[str]]:
    """A chunk's groups from its bucket (0..999): everyone's, then one of 10, 100 and 1,000."""
    return [["all", f"c{b // 100}", f"d{b // 10}", f"p{b}"] for b in buckets.tolist()]


class Corpus:
    """The synthetic chunks written so far: their vectors and buckets kept for the exact search."""

    def __init__(self, seed: int, passages: list[str], embedder: OnnxEmbedder) -> None:
        self.rng = np.random.default_rng(seed)
        self.words = [p.split() for p in passages]
        self.centres = embedder.embed(passages).astype(np.float32)
        self._vectors: list[np.ndarray] = []
        self._buckets: list[np.ndarray] = []
        self._joined: tuple[np.ndarray, np.ndarray] | None = None

    def batch(self, start: int, count: int) -> bytes:
        """The JSON of ``count`` new chunks, numbered from ``start``."""
        rng = self.rng
        which = rng.integers(len(self.words), size=count)
        vectors = self.centres[which] + rng.normal(0, NOISE, (count, DIMENSION)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = np.round(vectors, 6)  # what the JSON carries, and so what Solr holds
        buckets = rng.integers(1000, size=count).astype(np.int32)
        self._vectors.append(vectors.astype(np.float32))
        self._buckets.append(buckets)
        self._joined = None
        docs = []
        for i, (passage, vector, acl) in enumerate(zip(which.tolist(), vectors.tolist(), groups(buckets), strict=True)):
            words = self.words[passage]
            picked = np.sort(rng.choice(len(words), size=min(60, len(words)), replace=False))
            text = " ".join(words[j] for j in picked.tolist())
            docs.append(
                {
                    "id": f"scale-{start + i}",
                    "parent_doc": f"scale-parent-{(start + i) // 4}",
                    "chunk_index": (start + i) % 4,
                    "language": "en",
                    "exactContent": text,
                    "embedded_content": text,
                    "vector_384": vector,
                    "allow_token_document": acl,
                }
            )
        return json.dumps(docs).encode("utf-8")

    def exact(self, query: np.ndarray, group: str, k: int = 10) -> set[int]:
        """Row numbers (= ids) of the exact top ``k`` by cosine among the chunks ``group`` may read."""
        if self._joined is None:
            self._joined = (np.concatenate(self._vectors), np.concatenate(self._buckets))
        vectors, buckets = self._joined
        rows = np.flatnonzero(readable(buckets, group))
        top = rows[np.argsort(-(vectors[rows] @ query))[:k]]
        return set(top.tolist())


def readable(buckets: np.ndarray, group: str) -> np.ndarray:
    if group == "all":
        return np.ones(len(buckets), dtype=bool)
    width = {"c": 100, "d": 10, "p": 1}[group[0]]
    return buckets // width == int(group[1:])


@contextmanager
def scale_stack(nodes: int, heap: str) -> Iterator[tuple[Settings, SolrClient, list[int]]]:
    """A secured local SolrCloud of ``nodes`` nodes (one shard per node) in a folder of its own,
    the collections bootstrapped with the in-process model. Yields settings, client, Solr pids."""
    from datafari_rag.solr.runtime import cluster
    from datafari_rag.solr.security_json import write_config
    from datafari_rag.testing.servers import free_port

    home = Path(tempfile.mkdtemp(prefix="datafari-rag-scale-"))
    os.environ["DATAFARI_RAG_VAR"] = str(home)  # the cluster's homes, logs and pid files
    account = Settings(solr_password=secrets.token_urlsafe(16), groups_as_tokens=True)
    port = free_port()
    nodes_cluster = cluster(
        port, nodes, heap=heap, security_json=write_config(account, home / "security.json"), zookeepers=1
    )
    nodes_cluster.start(timeout=180)
    try:
        settings = account.replace(
            solr_url=nodes_cluster.urls,
            collection_main="scale_FileShare",
            collection_vector="scale_VectorMain",
            solr_soft_commit_ms=60000,
        )
        solr = SolrClient(nodes_cluster.nodes[0].url, timeout=600, auth=credentials(settings))
        bootstrap(solr, settings, shards=nodes)
        yield settings, solr, [p for n in nodes_cluster.nodes if (p := n.pid()) is not None]
    finally:
        nodes_cluster.stop()
        shutil.rmtree(home, ignore_errors=True)  # gigabytes at a million chunks


def write(solr: SolrClient, settings: Settings, corpus: Corpus, start: int, count: int) -> float:
    """Writes ``count`` chunks from ``start`` (two batches in flight while the next is made),
    then commits; chunks/s, the commit included."""
    began = time.perf_counter()
    path = f"{settings.collection_vector}/update"
    url = f"{settings.solr_url.split(',')[0]}/{path}"
    # not the product's client: a body of megabytes is sent while Solr is busy with the last one,
    # longer than its connect timeout (which bounds the send) allows
    with requests.Session() as http, ThreadPoolExecutor(max_workers=2) as pool:
        http.auth, http.trust_env = credentials(settings), False

        def send(body: bytes) -> None:
            http.post(url, data=body, headers=JSON, timeout=(3600, 3600)).raise_for_status()

        pending: list[Future[None]] = []
        for offset in range(start, start + count, BATCH):
            pending.append(pool.submit(send, corpus.batch(offset, min(BATCH, start + count - offset))))
            while len(pending) >= 2:
                pending.pop(0).result()
        for future in pending:
            future.result()
    solr.get(path, {"commit": "true"}, timeout=3600)
    return count / (time.perf_counter() - began)


def search(
    solr: SolrClient,
    settings: Settings,
    corpus: Corpus,
    queries: list[str],
    vectors: np.ndarray,
    group: str,
    ef_values: tuple[int, ...] = EF_SEARCH,
    top_k: int = 10,
) -> dict[int, dict[str, float]]:
    """For each of ``ef_values`` (the graph explored for that many candidates, the best 10 kept):
    kNN p50/p99, recall@10 and the BM25 p50, for a user holding ``group``. Each query is searched
    with every value in turn, the order rotating, so that a merge or a collection in the
    background weighs on all of them alike."""
    user = UserAccess(username="scale-user", tokens=frozenset({group}), groups=(group,))
    acl = acl_params(user)
    knn_ms: dict[int, list[float]] = {ef: [] for ef in ef_values}
    recalls: dict[int, list[float]] = {ef: [] for ef in ef_values}
    bm25_ms: list[float] = []
    for i, (text, vector) in enumerate(zip(queries, vectors, strict=True)):
        exact = corpus.exact(vector, group)
        for ef in ef_values[i % len(ef_values) :] + ef_values[: i % len(ef_values)]:
            form = [("queryrag", text), ("topK", top_k), ("efSearch", ef), ("rows", 10), ("fl", "id"), *acl]
            began = time.perf_counter()
            answer = solr.request(
                "POST", f"{settings.collection_vector}/vector", data=urlencode(form).encode(), headers=FORM
            )
            knn_ms[ef].append((time.perf_counter() - began) * 1000)
            found = {
                int(d["id"].removeprefix("scale-")) for d in answer["response"]["docs"] if d["id"].startswith("scale-")
            }
            recalls[ef].append(len(found & exact) / max(1, min(10, len(exact))))
        bm25 = [("q", text), ("defType", "edismax"), ("rows", 10), ("fl", "id"), *acl]
        began = time.perf_counter()
        solr.request("POST", f"{settings.collection_vector}/select", data=urlencode(bm25).encode(), headers=FORM)
        bm25_ms.append((time.perf_counter() - began) * 1000)
    skip = len(queries) // 5  # the first searches of a filter build its caches: not counted
    return {
        ef: {
            "knn_p50": percentile(knn_ms[ef][skip:], 50),
            "knn_p99": percentile(knn_ms[ef][skip:], 99),
            "recall": float(np.mean(recalls[ef])),
            "bm25_p50": percentile(bm25_ms[skip:], 50),
        }
        for ef in ef_values
    }


def node_clients(solr: SolrClient, settings: Settings) -> list[SolrClient]:
    """One client per node of the cluster, with the service account's credentials."""
    return [SolrClient(url, timeout=600, auth=solr.auth) for url in settings.solr_url.split(",")]


def vector_cores(solr: SolrClient, settings: Settings) -> list[dict[str, Any]]:
    """The status of each VectorMain core, on every node."""
    return [
        core
        for node in node_clients(solr, settings)
        for name, core in node.get("admin/cores", {"action": "STATUS"})["status"].items()
        if name.startswith(settings.collection_vector + "_")
    ]


def segments(solr: SolrClient, settings: Settings) -> tuple[int, int]:
    """VectorMain's bytes on disk and segment count, over every node."""
    cores = vector_cores(solr, settings)
    return sum(int(c["index"]["sizeInBytes"]) for c in cores), sum(int(c["index"]["segmentCount"]) for c in cores)


# Lucene's files by what they hold (the extensions of Lucene 9's codec)
FILE_KINDS = {
    ".vec": "vectors",
    ".vex": "HNSW graph",
    ".fdt": "stored fields",
    ".tim": "terms",
    ".doc": "postings",
    ".pos": "postings",
    ".dvd": "doc values",
}


def disk_by_kind(solr: SolrClient, settings: Settings) -> dict[str, int]:
    """VectorMain's bytes on disk by what they hold (the nodes run on this machine)."""
    sizes: dict[str, int] = {}
    for core in vector_cores(solr, settings):
        for file in Path(core["dataDir"]).glob("index*/*"):
            kind = FILE_KINDS.get(file.suffix, "other")
            sizes[kind] = sizes.get(kind, 0) + file.stat().st_size
    return sizes


def settled(solr: SolrClient, settings: Settings, quiet: float = 30.0, most: float = 900.0) -> float:
    """Waits until no merge has changed the index for ``quiet`` seconds (at most ``most``), so that
    searches are timed on the index as it stays, not beside the merges a bulk write leaves running;
    the seconds waited."""
    began = time.monotonic()
    last, since = segments(solr, settings), time.monotonic()
    while time.monotonic() - since < quiet and time.monotonic() - began < most:
        time.sleep(5)
        now = segments(solr, settings)
        if now != last:
            last, since = now, time.monotonic()
    return time.monotonic() - began


def heap_mb(solr: SolrClient, settings: Settings) -> float:
    """Heap used, summed over the nodes."""
    used = 0.0
    for node in node_clients(solr, settings):
        metrics = node.get("admin/metrics", {"group": "jvm", "prefix": "memory.heap.used"})["metrics"]
        used += float(metrics["solr.jvm"]["memory.heap.used"]) / 2**20
    return used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000", help="chunk counts, ascending (the index grows)")
    parser.add_argument("--nodes", type=int, default=1, help="local Solr nodes, one shard on each")
    parser.add_argument("--heap", default="2g", help="each node's Java heap")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="2,000 and 10,000 chunks, 30 queries")
    args = parser.parse_args()
    sizes = [2000, 10000] if args.quick else [int(s) for s in args.sizes.split(",")]
    count = 30 if args.quick else args.queries
    embedder = OnnxEmbedder(BGE_SMALL)
    corpus = Corpus(13, sample_texts(1000), embedder)
    queries = [json.loads(line)["text"] for line in (SCIFACT.parent / "queries.jsonl").open()][:count]
    vectors = embedder.embed(queries).astype(np.float32)
    rows: list[tuple[int, str, int, dict[str, float]]] = []
    first_sight: dict[str, float] | None = None
    with scale_stack(args.nodes, args.heap) as (settings, solr, _pids):
        written = 0
        for size in sizes:
            rate = write(solr, settings, corpus, written, size - written)
            written = size
            waited = settled(solr, settings)
            if first_sight is None:  # each text's first search: Solr's model embeds it, then keeps its vector
                # topK 11: a query of its own, whose results Solr's result cache cannot give a later row
                first_sight = search(solr, settings, corpus, queries, vectors, "all", EF_SEARCH[-1:], 11)[EF_SEARCH[-1]]
                print(
                    f"scale: each query's first search (its text embedded in Solr, 100% readable, efSearch "
                    f"{EF_SEARCH[-1]}): kNN p50 {first_sight['knn_p50']:.1f} p99 {first_sight['knn_p99']:.1f} ms; "
                    "the rows below search again texts already embedded: the search alone",
                    flush=True,
                )
            for group in SELECTIVITIES.values():  # every filter's caches built, the JIT warm: not counted
                search(solr, settings, corpus, queries[:10], vectors[:10], group)
            measured = {
                (name, k): m
                for name, g in SELECTIVITIES.items()
                for k, m in search(solr, settings, corpus, queries, vectors, g).items()
            }
            disk, heap = segments(solr, settings)[0], heap_mb(solr, settings)
            kinds = ", ".join(
                f"{k} {v / size * 1e6 / 2**30:.2f}" for k, v in sorted(disk_by_kind(solr, settings).items())
            )
            rows += [(size, name, k, m) for (name, k), m in measured.items()]
            cells = "; ".join(
                f"{name} efSearch {k}: kNN p50 {m['knn_p50']:.1f} p99 {m['knn_p99']:.1f} ms recall {m['recall']:.3f}, "
                f"BM25 p50 {m['bm25_p50']:.1f} ms"
                for (name, k), m in measured.items()
            )
            emit(
                "scale",
                f"scale: {size} chunks on {args.nodes} node(s): written at {rate:.0f} chunks/s, merges settled "
                f"{waited:.0f} s later; {cells}; "
                f"heap {heap:.0f} MB, disk {disk / 2**20:.0f} MB "
                f"({disk / size * 1e6 / 2**30:.2f} GB per million: {kinds})",
                Figure(f"{size} chunks: writes", rate, "chunks/s"),
                *(
                    Figure(f"{size} chunks, {n}, efSearch {k}: kNN p50", m["knn_p50"], "ms")
                    for (n, k), m in measured.items()
                ),
                *(
                    Figure(f"{size} chunks, {n}, efSearch {k}: recall@10", m["recall"])
                    for (n, k), m in measured.items()
                ),
                Figure(f"{size} chunks: disk per million", disk / size * 1e6 / 2**30, "GB"),
            )
    print(
        "\n| chunks | readable | efSearch | kNN p50 | kNN p99 | recall@10 | BM25 p50 |\n|---|---|---|---|---|---|---|"
    )
    for size, name, k, m in rows:
        print(
            f"| {size:,} | {name} | {k} | {m['knn_p50']:.1f} ms | {m['knn_p99']:.1f} ms | {m['recall']:.3f} | "
            f"{m['bm25_p50']:.1f} ms |"
        )


if __name__ == "__main__":
    main()
