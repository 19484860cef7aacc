"""Leak harness: random ACLs, users and requests over every path; counts what leaked.

Prints one line: trials, leaks (target 0 in >= 10,000 trials), and how many trials reached the
LLM with readable documents (so that zero leaks is not zero exposure), then the controls, 200
trials each: the sidecar's layer off (Solr's alone must hold), Solr's layer off (the sidecar's
alone must hold), and both off, which must show leaks — a control at 0 with everything off
means the harness is blind, and fails the run. Then Solr's own door
(:mod:`datafari_rag.testing.solr_door_harness`): random requests straight to Solr by anonymous
clients and Solr users, on both collections and a workflow's pair, every handler and parameter
family, with requests, leaks, refusals and denials; parity of each user's documents with the
sidecar; and its controls (guard off, filter off, both off), each of which must show leaks.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from bench.common import Figure, bench_stack, emit
from datafari_rag.app import create_app
from datafari_rag.solr.collection import Collection
from datafari_rag.testing.acl_harness import LAYERS, build, harness_settings, layers_off, one_trial
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.oracle_harness import judgement_off, solr_direct, through_sidecar
from datafari_rag.testing.servers import serve
from datafari_rag.testing.solr_door_harness import CONTROLS as DOOR_CONTROLS
from datafari_rag.testing.solr_door_harness import add_workflow_pair, open_door, parity
from datafari_rag.testing.solr_door_harness import run as door_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--direct", type=int, default=5_000, help="requests straight to Solr")
    parser.add_argument("--quick", action="store_true", help="500 trials, 500 requests straight to Solr")
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()
    trials = 500 if args.quick else args.trials
    direct_trials = 500 if args.quick else args.direct
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
        # Solr's own door: random clients of Solr itself, on both collections and a workflow's pair
        pairs = [(settings.collection_main, settings.collection_vector)]
        pairs.append(add_workflow_pair(solr, settings, corpus, folder))
        door = open_door(solr, settings.solr_url, corpus, pairs)
        direct = door_run(rng, door, direct_trials)
        door_controls = {c: len(door_run(rng, door, 200, c).leaks) for c in DOOR_CONTROLS}
        differences = parity(door, clients["bm25"])
        # the differential oracle harness: anonymous and two users straight to Solr, two users
        # through the sidecar's surfaces (alerts need the store of a signed-in user)
        readers = [c for c in door.clients if c.tokens][:2]
        oracle = solr_direct(rng, door, [door.clients[0], *readers])
        oracle_control = solr_direct(rng, door, door.clients[:1], control=True)
        stored = create_app(app_settings.replace(store_url=f"sqlite:///{folder / 'oracle.db'}")).test_client()
        main = Collection(solr, settings.collection_main)
        sidecar_oracle = through_sidecar(rng, stored, main, corpus, [c.name for c in readers])
        with judgement_off():
            sidecar_control = through_sidecar(rng, stored, main, corpus, [readers[0].name])
    held = controls["sidecar"] == 0 and controls["solr"] == 0
    blind = [c for c, n in door_controls.items() if n == 0]
    oracles = len(oracle.oracles) + len(sidecar_oracle.oracles)
    oracle_blind = not oracle_control.oracles or not sidecar_control.oracles
    emit(
        "acl_leaks",
        f"acl_leaks: {len(leaks)} leaks in {trials} trials ({len(kinds)} request kinds x bm25/vector/rrf, "
        f"{len(corpus.users)} users, {len(corpus.docs)} documents; {reached} trials reached the LLM; "
        f"{seconds:.0f} s); controls of 200 trials: sidecar's layer off {controls['sidecar']} leaks, "
        f"Solr's layer off {controls['solr']}, both off {controls['both']} (must be > 0); target 0. "
        f"Solr direct: {direct.line()}; parity with the sidecar: {len(differences)} users differ; controls of "
        f"200 requests: guard off {door_controls['guard']} leaks, filter off {door_controls['filter']}, "
        f"both off {door_controls['both']} (each must be > 0). Oracles (an unreadable document's word against "
        f"an absent one): Solr direct {oracle.line()}, through the sidecar {sidecar_oracle.line()}; "
        f"with the door's judgement off {len(oracle_control.oracles)} and {len(sidecar_control.oracles)} "
        f"(each must be > 0)",
        Figure(f"leaks in {trials} trials", len(leaks), "", "= 0", not leaks),
        Figure(f"Solr-direct leaks in {direct.requests} requests", len(direct.leaks), "", "= 0", not direct.leaks),
        Figure(
            "Solr-direct users whose documents differ from the sidecar's", len(differences), "", "= 0", not differences
        ),
        Figure("Solr-direct controls at 0 (blind)", len(blind), "", "= 0", not blind),
        Figure(f"oracles in {oracle.pairs + sidecar_oracle.pairs} pairs", oracles, "", "= 0", not oracles),
        Figure("oracle controls at 0 (blind)", int(oracle_blind), "", "= 0", not oracle_blind),
        Figure("leaks with one layer off (each alone holds)", controls["sidecar"] + controls["solr"], "", "= 0", held),
        Figure("leaks with both layers off (control)", controls["both"], "", "> 0", controls["both"] > 0),
    )
    for trial, doc in leaks[:10]:
        print(f"  leak: {trial} saw {doc}")
    for difference in differences[:10]:
        print(f"  parity: {difference}")
    for request, shown in direct.leaks[:10]:
        print(f"  Solr-direct leak: {request} showed {shown}")
    for request, shown in [*oracle.oracles, *sidecar_oracle.oracles][:10]:
        print(f"  oracle: {request}: {shown}")
    if controls["both"] == 0:
        raise SystemExit("acl_leaks: with both layers off the harness saw no leak: it is blind")
    if blind:
        raise SystemExit(f"acl_leaks: the Solr-direct harness saw no leak with {', '.join(blind)} off: it is blind")
    if oracle_blind:
        raise SystemExit("acl_leaks: with the door's judgement off the oracle harness found nothing: it is blind")


if __name__ == "__main__":
    main()
