"""The sidecar's cost on plain searches: the same BM25 (``search/select``) and kNN (``search/vector``)
queries through the sidecar and straight to Solr, alternated in the same run. The direct request
carries exactly what the sidecar sends (the anonymous user's ACL filter included), so the ratio is
the sidecar's own share. A third arm goes through ``bench/bare_hop.py``, a bare gunicorn app
served like the sidecar that forwards the same request with no code of its own: the floor any
gunicorn sidecar pays for the extra HTTP hop. Prints one line with p50/p99 of direct and sidecar,
the p50 ratio (target <= 1.10) and the milliseconds the sidecar and the bare hop add.

FileShare holds the SciFact abstracts when the evaluation data is there (BM25 over 5,183 documents),
VectorMain the sample corpus's chunks.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import requests

from bench.common import SCIFACT, SERVICES, Figure, bench_stack, emit, percentile, search_arguments, warm_solr
from datafari_rag.config import Settings
from datafari_rag.indexing.embedder import ChunkEmbedder
from datafari_rag.paths import CONF
from datafari_rag.security import UserAccess
from datafari_rag.security.acl import acl_params
from datafari_rag.solr import SolrClient, user_properties
from datafari_rag.solr.service_account import credentials
from datafari_rag.testing.servers import free_port, served_process, served_sidecar, settings_env

SAMPLE_QUERIES = ["paid annual leave", "reset my password", "VPN client", "parking electric chargers", "congés payés"]
API = "/Datafari/rest/v2.0"
Arms = tuple[Callable[[], Any], Callable[[], Any], Callable[[], Any]]
Form = list[tuple[str, Any]]


def load_scifact(solr: SolrClient, settings: Settings, limit: int) -> list[str]:
    """Adds SciFact abstracts to FileShare (BM25 only: FileShare's processor is off while they are
    written, so none is chunked and embedded) and returns claims as queries."""
    if not SCIFACT.exists():
        return SAMPLE_QUERIES
    docs = []
    with SCIFACT.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            docs.append({"id": f"scifact-{d['_id']}", "title": d["title"], "url": d["_id"], "exactContent": d["text"]})
            if len(docs) == limit:
                break
    user_properties.set_properties(solr, settings.collection_main, {"vector.enabled": "false"})
    try:
        for start in range(0, len(docs), 1000):
            solr.post(f"{settings.collection_main}/update", json=docs[start : start + 1000], timeout=300)
        solr.post(f"{settings.collection_main}/update", json={"commit": {}})
    finally:
        user_properties.set_properties(solr, settings.collection_main, {"vector.enabled": "true"})
    queries_file = SCIFACT.parent / "queries.jsonl"
    return [json.loads(line)["text"] for line in queries_file.open(encoding="utf-8")]


def measure(calls: list[tuple[Callable[[], Any], ...]], warmup: int) -> list[list[float]]:
    """Times each tuple's calls back to back, so drift hits every arm equally; which arm goes first
    rotates, so that whatever the first call leaves warm favours none. One list of ms per arm."""
    arms = len(calls[0])
    times: list[list[float]] = [[] for _ in range(arms)]
    for i, call in enumerate(calls):
        took = [0.0] * arms
        for arm in ((i + k) % arms for k in range(arms)):
            began = time.perf_counter()
            call[arm]()
            took[arm] = (time.perf_counter() - began) * 1000
        if i >= warmup:
            for arm in range(arms):
                times[arm].append(took[arm])
    return times


@contextmanager
def served_passthrough(settings: Settings, port: int) -> Iterator[str]:
    """bench/bare_hop.py served like the sidecar (same gunicorn settings), on ``port``."""
    env = {**settings_env(settings), "DATAFARI_RAG_SERVER_PORT": str(port)}
    args = ["gunicorn", "-c", str(CONF / "gunicorn.conf.py"), "bench.bare_hop:app"]
    with served_process(args, f"http://127.0.0.1:{port}/", env):
        yield f"http://127.0.0.1:{port}"


def summary(name: str, direct: list[float], sidecar: list[float], floor: list[float]) -> str:
    d50, s50 = percentile(direct, 50), percentile(sidecar, 50)
    return (
        f"{name} sidecar p50 {s50:.1f} ms p99 {percentile(sidecar, 99):.1f} ms, Solr p50 {d50:.1f} ms "
        f"p99 {percentile(direct, 99):.1f} ms, ratio {s50 / d50:.2f} ({added(sidecar, direct):+.1f} ms, of which "
        f"a bare gunicorn pass-through {added(floor, direct):+.1f} ms)"
    )


def added(through: list[float], direct: list[float]) -> float:
    """Milliseconds a path adds to the direct one, at p50."""
    return round(percentile(through, 50) - percentile(direct, 50), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--service", choices=SERVICES, default=SERVICES[0], help="solr.embeddings.service")
    parser.add_argument("--query-model", default="", help="solr.embeddings.queryModelName (e.g. bge-small-en-v1.5-q)")
    args, count, docs = search_arguments(__doc__, 300, 60, parser)
    acl = [*acl_params(UserAccess.anonymous()), ("echoParams", "none")]
    stack = bench_stack("benchso_", embeddings_service=args.service, embeddings_query_model_name=args.query_model)
    with stack as (settings, solr, _agent):
        queries = load_scifact(solr, settings, docs)
        warm_solr(settings, solr, queries, bursts=40 if args.quick else 200, concurrency=8)
        with (
            served_sidecar(settings, free_port()) as base,
            served_passthrough(settings, free_port()) as floor,
            requests.Session() as http,
        ):
            http.trust_env = False
            account = credentials(settings)  # straight to Solr as the sidecar is: the service account

            def ok(response: requests.Response) -> None:
                response.raise_for_status()
                assert response.json().get("status") != "ERROR", response.text

            def arms(path: str, straight: Form, api: str, sidecar: dict[str, Any], bare: Form) -> Arms:
                """Straight to Solr (as the sidecar sends it), through the sidecar, through the bare hop."""
                solr_url = f"{settings.solr_url}/{path}"
                return (
                    lambda: ok(http.post(solr_url, data=[*straight, *acl, ("wt", "json")], auth=account)),
                    lambda: ok(http.get(f"{base}{API}/{api}", params=sidecar)),
                    lambda: ok(http.get(f"{floor}/{path}", params=[*bare, *acl])),
                )

            def bm25(i: int) -> Arms:
                # different queries per arm: Solr's result cache must not answer a later call
                q = [queries[(3 * i + k) % len(queries)] for k in range(3)]
                form = [[("q", text), ("defType", "edismax"), ("q.op", "OR"), ("start", 0), ("rows", 10)] for text in q]
                # hl=false: the same Solr work on every arm (the search page's snippets are Solr's cost)
                sidecar = {"q": q[1], "hl": "false"}
                return arms(f"{settings.collection_main}/select", form[0], "search/select", sidecar, form[2])

            def knn(i: int) -> Arms:
                # different queries per arm: Solr's model keeps the vectors of recent query texts,
                # and each arm must pay for its query's embedding
                q = [queries[(3 * i + k) % len(queries)] for k in range(3)]
                form = [
                    [
                        ("queryrag", text),
                        ("topK", settings.solr_top_k),
                        ("rows", settings.solr_top_k),
                        ("model", settings.query_model),
                        ("vectorField", settings.vector_field),
                    ]
                    for text in q
                ]
                vector = f"{settings.collection_vector}/vector"
                return arms(vector, form[0], "search/vector", {"queryrag": q[1]}, form[2])

            def warm_knn(i: int) -> None:
                """A kNN search straight to Solr with a text the measurement never sends."""
                form = [("queryrag", f"{queries[i % len(queries)]} (warm-up {i})"), ("model", settings.query_model)]
                vector = f"{settings.solr_url}/{settings.collection_vector}/vector"
                ok(http.post(vector, data=[*form, ("vectorField", settings.vector_field), *acl], auth=account))

            bm25_times = measure([bm25(i) for i in range(count + 20)], warmup=20)
            # warm_solr warmed the BM25 path only: a fresh JVM compiles the kNN path over its first
            # thousand searches (p50 18.5 ms over the first 150, 9.5 ms after 750, its compiler
            # threads taking the core a query's embedding runs on), so the path is warmed with texts
            # the measurement does not send (Solr keeps the vectors of recent query texts)
            for i in range(100 if args.quick else 900):
                warm_knn(i)
            knn_times = measure([knn(i) for i in range(count + 40)], warmup=40)
            given_times = vector_given(settings, http, account, acl, queries, count) if not args.query_model else []
    # the query's embedding is the difference (solr.embeddings.service: in Solr's JVM by default)
    knn_gap = added(knn_times[0], bm25_times[0])
    # what of it is the embedding itself: the same kNN search, its vector given instead of its text
    embedding = added(knn_times[0], given_times) if given_times else None
    inside = (
        f"; the query's embedding inside Solr {embedding:.1f} ms (kNN with the vector given p50 "
        f"{percentile(given_times, 50):.1f} ms)"
        if embedding is not None
        else ""
    )
    ratios = {
        name: percentile(t[1], 50) / percentile(t[0], 50) for name, t in {"bm25": bm25_times, "kNN": knn_times}.items()
    }
    emit(
        "solr_overhead",
        f"solr_overhead: {summary('bm25 search/select', *bm25_times)}; {summary('kNN search/vector', *knn_times)} "
        f"(target ratio <= 1.10 at p50; {len(bm25_times[0])} + {len(knn_times[0])} requests per arm); kNN straight "
        f"to Solr {knn_gap:+.1f} ms over BM25 at p50 (embeddings: {settings.embeddings_service}"
        f"{', queries: ' + args.query_model if args.query_model else ''}, target <= 5 ms){inside}",
        *(Figure(f"{name} p50 sidecar / Solr", r, "", "<= 1.10", r <= 1.10) for name, r in ratios.items()),
        Figure("bm25 p50 added by the sidecar", added(bm25_times[1], bm25_times[0]), "ms"),
        Figure("bm25 p50 added by a bare gunicorn hop", added(bm25_times[2], bm25_times[0]), "ms"),
        Figure(f"kNN p50 straight to Solr - BM25's ({args.service})", knn_gap, "ms", "<= 5 ms", knn_gap <= 5),
        *([Figure("kNN p50 by text - with the vector given", embedding, "ms")] if embedding is not None else []),
    )


def vector_given(
    settings: Settings, http: requests.Session, account: Any, acl: Form, queries: list[str], count: int
) -> list[float]:
    """kNN straight to Solr with each query's vector given (``{!knn}``, the same model's vector
    made here: the same ONNX file), so that the text's p50 minus this one is the embedding alone."""
    vectors = ChunkEmbedder(settings).embed([queries[(3 * i) % len(queries)] for i in range(count + 40)])
    select = f"{settings.solr_url}/{settings.collection_vector}/select"
    top = settings.solr_top_k

    def given(vector: list[float]) -> Callable[[], Any]:
        query = f"{{!knn f={settings.vector_field} topK={top}}}[{','.join(f'{x:.7g}' for x in vector)}]"
        form = [("q", query), ("rows", top), *acl, ("wt", "json")]
        return lambda: http.post(select, data=form, auth=account).raise_for_status()

    return measure([(given(v),) for v in vectors], warmup=40)[0]


if __name__ == "__main__":
    main()
