"""Readiness under load: 24 clients search through the sidecar for ``--seconds`` while a load
balancer's probe asks ``/health/ready`` every 0.2 s, with ``health.timeout`` short enough that the
background checks, busy like the searches, often outlast it. Counts the probe's 503s while every
search succeeds (target 0), against the rule before readiness meant "a request sent now would be
served" — a check that ran out of time counted as failed — in the same run, on the same load.
Prints one line."""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from unittest import mock

from bench.common import Figure, bench_stack, emit
from datafari_rag.api.admin import health
from datafari_rag.app import create_app
from datafari_rag.config import Settings

CLIENTS = 24
QUERIES = ["paid leave", "password reset", "working from home", "expenses", "vpn", "salary review", "holidays"]


@contextmanager
def earlier_rule(on: bool) -> Iterator[None]:
    """The rule readiness had before: a part not answered in time failed the check."""
    if not on:
        yield
        return
    with mock.patch.object(health, "passes", lambda found, served, answers: found == "UP"):
        yield


def phase(settings: Settings, seconds: float, earlier: bool) -> tuple[int, int, int, int]:
    """(searches answered, searches failed, probes answered 503, probes) under the load."""
    with earlier_rule(earlier):
        app = create_app(settings.replace(health_interval=0.2, health_timeout=0.1, health_failures=2))
        probe = app.test_client()
        while probe.get("/health/ready").status_code != 200:  # the first good check, before the load
            time.sleep(0.1)
        ends = time.monotonic() + seconds
        counts = {"ok": 0, "failed": 0, "503": 0, "probes": 0}
        lock = threading.Lock()

        def search(worker: int) -> None:
            client, i = app.test_client(), worker
            while time.monotonic() < ends:
                answer = client.get("/Datafari/rest/v2.0/search/select", query_string={"q": QUERIES[i % len(QUERIES)]})
                with lock:
                    counts["ok" if answer.status_code == 200 else "failed"] += 1
                i += 1

        def probing() -> None:
            while time.monotonic() < ends:
                status = probe.get("/health/ready").status_code
                with lock:
                    counts["probes"] += 1
                    counts["503"] += status == 503
                time.sleep(0.2)

        with ThreadPoolExecutor(CLIENTS + 1) as pool:
            done = [pool.submit(search, w) for w in range(CLIENTS)] + [pool.submit(probing)]
            for future in done:
                future.result()
    return counts["ok"], counts["failed"], counts["503"], counts["probes"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--quick", action="store_true", help="10 s of load per rule")
    args = parser.parse_args()
    seconds = 10.0 if args.quick else args.seconds
    with bench_stack(prefix="benchready_") as (settings, _solr, _agent):
        ok, failed, unready, probes = phase(settings, seconds, earlier=False)
        ok0, failed0, unready0, probes0 = phase(settings, seconds, earlier=True)
    emit(
        "readiness",
        f"readiness: {CLIENTS} clients searching for {seconds:g} s, health.timeout 0.1 s: {ok} searches answered, "
        f"{failed} failed; /health/ready 503 in {unready} of {probes} probes (target 0 while every search "
        f"succeeds); the earlier rule (a check out of time failed) on the same load: {unready0} of {probes0} "
        f"({ok0} searches answered, {failed0} failed)",
        Figure("readiness 503s while searches succeed", unready, "", "= 0", unready == 0 and failed == 0),
        Figure("readiness 503s, the earlier rule", unready0, ""),
    )


if __name__ == "__main__":
    main()
