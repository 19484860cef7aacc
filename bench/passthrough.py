"""The sidecar's hop, option by option: the milliseconds a BM25 search gains at p50 when it goes
through an HTTP server in front of Solr instead of straight to it, for each server that could
carry the sidecar. All arms send the same kind of search (SciFact claims, edismax, the anonymous
user's ACL filter), alternated in one run, against the same warmed Solr:

- Solr straight (the baseline);
- the sidecar's ``search/select`` under gunicorn's gthread workers (how ``datafari-rag serve`` runs it);
- the same sidecar under granian (a Rust HTTP server calling the same WSGI app);
- ``bench/bare_hop.py`` (forwards the query string with the product's Solr client, nothing else)
  under gunicorn, then under granian: the floor each server puts under any sidecar.

Prints one line: each arm's p50 and what it adds over Solr's (target: the sidecar's <= 1.0 ms).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import requests

from bench.common import Figure, bench_stack, emit, percentile, search_arguments, warm_solr
from bench.solr_overhead import API, load_scifact, measure
from datafari_rag.config import Settings
from datafari_rag.paths import CONF
from datafari_rag.security import UserAccess
from datafari_rag.security.acl import acl_params
from datafari_rag.solr.service_account import credentials
from datafari_rag.testing.servers import free_port, served_process, served_sidecar, settings_env

SIDECAR = "datafari_rag.app:create_app"
BARE = "bench.bare_hop:app"


def granian(target: str, settings: Settings, factory: bool = False) -> list[str]:
    """granian serving ``target`` with the sidecar's processes and threads (server.workers/threads)."""
    return [
        "granian",
        "--interface",
        "wsgi",
        *(["--factory"] if factory else []),
        "--host",
        "127.0.0.1",
        "--port",
        str(settings.server_port),
        "--workers",
        str(settings.server_workers),
        "--blocking-threads",
        str(settings.server_threads),
        "--no-ws",
        "--log-level",
        "warning",
        target,
    ]


@contextmanager
def served(command: list[str], settings: Settings, ready: str) -> Iterator[str]:
    base = f"http://127.0.0.1:{settings.server_port}"
    with served_process(command, f"{base}{ready}", settings_env(settings)):
        yield base


def main() -> None:
    args, count, docs = search_arguments(__doc__, 400, 60)
    acl = [*acl_params(UserAccess.anonymous()), ("echoParams", "none")]
    with bench_stack("benchpt_") as (settings, solr, _agent):
        queries = load_scifact(solr, settings, docs)
        warm_solr(settings, solr, queries, bursts=40 if args.quick else 200, concurrency=8)
        ports = {name: settings.replace(server_port=free_port()) for name in ("gsidecar", "gbare", "bare")}
        with (
            served_sidecar(settings, free_port()) as sidecar,
            served(granian(SIDECAR, ports["gsidecar"], factory=True), ports["gsidecar"], "/health") as gsidecar,
            served(
                ["gunicorn", "-c", str(CONF / "gunicorn.conf.py"), BARE], ports["bare"], "/"
            ) as bare,  # as bench/solr_overhead.py serves it
            served(granian(BARE, ports["gbare"]), ports["gbare"], "/") as gbare,
            requests.Session() as http,
        ):
            http.trust_env = False
            account = credentials(settings)
            path = f"{settings.collection_main}/select"

            def ok(response: requests.Response) -> None:
                response.raise_for_status()
                assert response.json().get("status") != "ERROR", response.text

            def form(text: str) -> list[tuple[str, Any]]:
                return [("q", text), ("defType", "edismax"), ("q.op", "OR"), ("start", 0), ("rows", 10)]

            def arms(i: int) -> tuple[Callable[[], Any], ...]:
                # a different query per arm: Solr's result cache must not answer a later call
                q = [queries[(5 * i + k) % len(queries)] for k in range(5)]
                return (
                    lambda: ok(http.post(f"{settings.solr_url}/{path}", data=[*form(q[0]), *acl], auth=account)),
                    lambda: ok(http.get(f"{sidecar}{API}/search/select", params={"q": q[1], "hl": "false"})),
                    lambda: ok(http.get(f"{gsidecar}{API}/search/select", params={"q": q[2], "hl": "false"})),
                    lambda: ok(http.get(f"{bare}/{path}", params=[*form(q[3]), *acl])),
                    lambda: ok(http.get(f"{gbare}/{path}", params=[*form(q[4]), *acl])),
                )

            times = measure([arms(i) for i in range(count + 30)], warmup=30)
    direct = percentile(times[0], 50)
    names = ["sidecar, gunicorn", "sidecar, granian", "bare hop, gunicorn", "bare hop, granian"]
    added = {name: round(percentile(t, 50) - direct, 2) for name, t in zip(names, times[1:], strict=True)}
    sidecar_best = min(added["sidecar, gunicorn"], added["sidecar, granian"])
    emit(
        "passthrough",
        f"passthrough: BM25 straight to Solr p50 {direct:.2f} ms; added at p50: "
        + ", ".join(f"{name} {ms:+.2f} ms" for name, ms in added.items())
        + f" (target: the sidecar <= 1.0 ms; {len(times[0])} requests per arm)",
        *(Figure(f"bm25 p50 added: {name}", ms, "ms") for name, ms in added.items()),
        Figure("bm25 p50 added by the sidecar, best server", sidecar_best, "ms", "<= 1.0 ms", sidecar_best <= 1.0),
    )


if __name__ == "__main__":
    main()
