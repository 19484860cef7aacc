"""Leak harness: random ACLs, users and requests over every path; counts what leaked.

Prints one line: trials, leaks (target 0 in >= 10,000 trials), and how many trials reached the
LLM with readable documents (so that zero leaks is not zero exposure), then the controls, 200
trials each: the sidecar's layer off (Solr's alone must hold), Solr's layer off (the sidecar's
alone must hold), and both off, which must show leaks — a control at 0 with everything off
means the harness is blind, and fails the run.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from bench.common import Figure, bench_stack, emit
from datafari_rag.app import create_app
from datafari_rag.testing.acl_harness import LAYERS, build, harness_settings, layers_off, one_trial
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
        controls = {}
        try:
            for layer in LAYERS:
                search.acl_params = layers_off(layer)
                controls[layer] = sum(len(one_trial(rng, clients, corpus, fake)[1]) for _ in range(200))
        finally:
            search.acl_params = original
    held = controls["sidecar"] == 0 and controls["solr"] == 0
    emit(
        "acl_leaks",
        f"acl_leaks: {len(leaks)} leaks in {trials} trials ({len(kinds)} request kinds x bm25/vector/rrf, "
        f"{len(corpus.users)} users, {len(corpus.docs)} documents; {reached} trials reached the LLM; "
        f"{seconds:.0f} s); controls of 200 trials: sidecar's layer off {controls['sidecar']} leaks, "
        f"Solr's layer off {controls['solr']}, both off {controls['both']} (must be > 0); target 0",
        Figure(f"leaks in {trials} trials", len(leaks), "", "= 0", not leaks),
        Figure("leaks with one layer off (each alone holds)", controls["sidecar"] + controls["solr"], "", "= 0", held),
        Figure("leaks with both layers off (control)", controls["both"], "", "> 0", controls["both"] > 0),
    )
    for trial, doc in leaks[:10]:
        print(f"  leak: {trial} saw {doc}")
    if controls["both"] == 0:
        raise SystemExit("acl_leaks: with both layers off the harness saw no leak: it is blind")


if __name__ == "__main__":
    main()
