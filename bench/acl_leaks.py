"""Leak harness: random ACLs, users and requests over every path; counts what leaked.

Prints one line: trials, leaks (target 0 in >= 10,000 trials), and how many trials reached the
LLM with readable documents (so that zero leaks is not zero exposure), with the same count
measured with the ACL filter switched off (the baseline: the harness sees leaks when there are).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from bench.common import Figure, bench_stack, emit
from datafari_rag.app import create_app
from datafari_rag.testing.acl_harness import build, harness_settings, one_trial
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import serve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="500 trials")
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()
    trials = 500 if args.quick else args.trials
    rng = random.Random(args.seed)
    fake = FakeLlm()
    folder = Path(tempfile.mkdtemp(prefix="datafari-rag-acl-"))
    with bench_stack(prefix="benchacl_") as (settings, solr, _), serve(fake.app()) as llm:
        corpus = build(rng, solr, settings, folder, docs=150, users=40)
        app_settings = harness_settings(settings, folder, f"{llm}/v1")
        clients = {
            m: create_app(app_settings.replace(retrieval_method=m)).test_client() for m in ("bm25", "vector", "rrf")
        }
        began = time.monotonic()
        leaks, reached, kinds = [], 0, set()
        for _ in range(trials):
            trial, leaked = one_trial(rng, clients, corpus, fake)
            leaks += [(trial, d) for d in leaked]
            reached += bool(fake.prompts())
            kinds.add(trial.split("/")[0])
        seconds = time.monotonic() - began
        import datafari_rag.solr.search as search

        original = search.acl_params
        search.acl_params = lambda access: []
        try:
            control = sum(len(one_trial(rng, clients, corpus, fake)[1]) for _ in range(200))
        finally:
            search.acl_params = original
    emit(
        "acl_leaks",
        f"acl_leaks: {len(leaks)} leaks in {trials} trials ({len(kinds)} request kinds x bm25/vector/rrf, "
        f"{len(corpus.users)} users, {len(corpus.docs)} documents; {reached} trials reached the LLM; "
        f"{seconds:.0f} s); with the filter off, 200 trials showed {control} leaks; target 0",
        Figure(f"leaks in {trials} trials", len(leaks), "", "= 0", not leaks),
        Figure("leaks with the filter off (control)", control),
    )
    for trial, doc in leaks[:10]:
        print(f"  leak: {trial} saw {doc}")


if __name__ == "__main__":
    main()
