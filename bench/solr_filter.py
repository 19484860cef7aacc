"""What Solr's own door costs a client that searches Solr directly: the same BM25 search, on a
secured Solr, through FileShare's ``/select`` as a Solr user other than the service account (the
security component checks every parameter, ``{!manifoldCFSecurity}`` filters as that user) and
through ``/internal`` as the service account (the same settings, sent by the client; neither), both with
BasicAuth, alternated in the same run. Both arms search the same query at each step, each query once:
two sets of queries differ in cost more than the door does (even-indexed against odd-indexed SciFact
claims moved the ratio by a few hundredths), and no result cache answers, as the two handlers' are
keyed apart (the filter is part of ``/select``'s key); which arm goes first rotates. Prints one line
with both p50/p99 and the p50 ratio (target <= 1.05).
"""

from __future__ import annotations

import secrets

import requests

from bench.common import Figure, bench_stack, emit, percentile, search_arguments, warm_solr
from bench.solr_overhead import load_scifact, measure
from datafari_rag.solr.service_account import credentials
from datafari_rag.testing.solr_door_harness import add_solr_users


def main() -> None:
    args, count, docs = search_arguments(__doc__, 400, 80)
    with bench_stack("benchsf_") as (settings, solr, _agent), requests.Session() as http:
        http.trust_env = False
        queries = load_scifact(solr, settings, docs)
        warm_solr(settings, solr, queries, bursts=40 if args.quick else 150, concurrency=8)
        base = f"{settings.solr_url}/{settings.collection_main}"
        service = credentials(settings)
        # conf/acl-mapping.json gives alice two tokens: the filter as a user with tokens
        reader = ("alice", secrets.token_urlsafe(12))
        add_solr_users(solr, f"{base}/select", {reader[0]: reader[1]})

        def search(handler: str, text: str, account: tuple[str, str] | None) -> None:
            form = [("q", text), ("defType", "edismax"), ("q.op", "OR"), ("rows", 10), ("wt", "json")]
            # every setting /select's defaults hold, sent to both: /internal has none of them (its
            # default fl is every stored field; /select adds the French proximity boost)
            form += [("qf", "title_en title_fr content_en content_fr"), ("tie", 0.3), ("echoParams", "none")]
            form += [("pf", "content_fr^3"), ("ps", 20), ("fl", "id,title,url,source,extension,language,score")]
            response = http.post(f"{base}/{handler}", data=form, auth=account)
            response.raise_for_status()

        calls = [
            (
                lambda i=i: search("select", queries[i % len(queries)], reader),
                lambda i=i: search("internal", queries[i % len(queries)], service),
            )
            for i in range(count + 20)
        ]
        filtered, bare = measure(calls, warmup=20)
    ratio = percentile(filtered, 50) / percentile(bare, 50)
    emit(
        "solr_filter",
        f"solr_filter: BM25 straight to a secured Solr as a Solr user (door: component + filter) "
        f"p50 {percentile(filtered, 50):.2f} ms p99 {percentile(filtered, 99):.2f} ms, as the service "
        f"account through /internal p50 {percentile(bare, 50):.2f} ms p99 {percentile(bare, 99):.2f} ms, "
        f"ratio {ratio:.3f} (target <= 1.05); {count} requests per arm",
        Figure("Solr door (component + filter) p50 / none p50", ratio, "", "<= 1.05", ratio <= 1.05),
    )


if __name__ == "__main__":
    main()
