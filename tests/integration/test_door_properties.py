"""Properties of the door's query rule, on generated queries (hypothesis) sent straight to a
secured Solr: a query it accepts never reaches beyond the client's filter (the documents it
returns, and the counts of its facet queries, are within what the reference rule lets the
client's user read), and a query it refuses answers 400, never 500 or anything else."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient
from datafari_rag.testing.acl_harness import WORDS, reference_allows
from datafari_rag.testing.solr_door_harness import Client, Door, corpus_door, send


@dataclass
class World:
    door: Door
    readers: list[Client]
    markers: list[str]


@pytest.fixture(scope="module")
def world(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> World:
    if solr.auth is None:
        pytest.skip("the Solr under test is open (DATAFARI_RAG_SOLR_URL without DATAFARI_RAG_SOLR_PASSWORD)")
    door, _ = corpus_door(solr, settings, tmp_path_factory.mktemp("door-properties"), "dpr", seed=51)
    readers = [door.clients[0], *[c for c in door.clients if c.tokens][:2]]
    return World(door, readers, [m.lower() for m in door.corpus.by_marker])


FIELDS = [
    "content_en",
    "title",
    "id",
    "exactContent",
    "allow_token_document",
    "_query_",
    "_val_",
    "nosuch",
    "indexed_at",
]


def queries(markers: list[str]) -> st.SearchStrategy[str]:
    """Queries in Solr's standard syntax, safe and hostile: terms (words, the corpus's markers),
    fields (plain, ACL, magic, unknown), phrases, ranges, prefixes, wildcards, fuzzy, boosts, local
    parameters, nested queries, functions, escapes and macros, combined by operators."""
    word = st.sampled_from([*WORDS, *markers, "*", "acl-1", "x"])
    field = st.sampled_from(FIELDS)
    escaped = st.sampled_from(
        ["\\u005fquery_", "\\_query\\_", "\\u0061llow_token_document", "_qu\\ery_", "\\u005fval_"]
    )
    leaf = st.one_of(
        word,
        st.builds(lambda f, w: f"{f}:{w}", st.one_of(field, escaped), word),
        st.builds(lambda f, a, b: f'{f}:"{a} {b}"', field, word, word),
        st.builds(lambda f, a, b: f"{f}:[{a} TO {b}]", field, word, word),
        st.builds(lambda f, w: f"{f}:{w[:3]}*", field, word),
        st.builds(lambda f, w: f"{f}:{w[:2]}?{w[3:]}", field, word),
        st.builds(lambda w: f"{w}~1", word),
        st.builds(lambda w, b: f"{w}^{b}", word, st.integers(1, 5)),
        st.builds(lambda w: "{!join from=content_en to=content_en}content_en:" + w, word),
        st.builds(lambda w: "{!frange l=1}docfreq(content_en,'" + w + "')", word),
        st.builds(lambda f, w: f'{f}:"{{!join from=content_en to=content_en}}content_en:{w}"', escaped, word),
        st.builds(lambda w: "{!term f=id}" + w, word),
        st.builds(lambda w: "{!tag=t}content_en:" + w, word),
        st.just("${m}"),
        st.just("*:*"),
    )
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.builds(lambda a, op, b: f"{a} {op} {b}", inner, st.sampled_from(["AND", "OR", "&&", "||"]), inner),
            st.builds(lambda a: f"({a})", inner),
            st.builds(lambda a: f"-{a}", inner),
            st.builds(lambda a: f"filter({a})", inner),
        ),
        max_leaves=4,
    )


def readable(world: World, client: Client) -> set[str]:
    docs = world.door.corpus.docs
    return {d for d in docs if reference_allows(client.tokens, docs[d])}


def test_an_accepted_query_stays_within_the_filter_and_a_refused_one_is_a_400(world: World) -> None:
    seen: Counter[int] = Counter()

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        client = data.draw(st.sampled_from(world.readers))
        query = data.draw(queries(world.markers))
        place = data.draw(st.sampled_from(["q-lucene", "q-edismax", "q-dismax", "fq", "facet.query"]))
        params = {
            "q-lucene": [("defType", "lucene"), ("q", query)],
            "q-edismax": [("q", query)],
            "q-dismax": [("defType", "dismax"), ("q", query)],
            "fq": [("q", "*:*"), ("fq", query)],
            "facet.query": [("q", "*:*"), ("facet", "true"), ("facet.query", query)],
        }[place]
        params += [("rows", "1000"), ("fl", "id")]
        if "${m}" in query:  # the macro's source
            params.append(("m", "{!join from=content_en to=content_en}*:*"))
        status, raw = send(world.door, client.auth, f"{world.door.pairs[0][0]}/select", params)
        seen[status] += 1
        assert status in (200, 400), (place, query, status, raw[:300])
        answer = json.loads(raw)
        if status == 400:
            # the door's refusal, or Solr's own parse error of a query the door let it parse
            assert answer["error"]["code"] == 400 and answer["error"]["msg"], (place, query, answer)
            return
        allowed = readable(world, client)
        got = {d["id"] for d in answer["response"]["docs"]}
        assert got <= allowed, (place, query, client.name, got - allowed)
        for count in answer.get("facet_counts", {}).get("facet_queries", {}).values():
            assert count <= len(allowed), (place, query, client.name, count)

    check()
    print("statuses of the generated queries:", dict(seen))
    assert seen[200] >= 30 and seen[400] >= 30, seen  # both sides of the rule were exercised
