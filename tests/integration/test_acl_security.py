"""The ACL filter against an independent reference, and the leak harness (a smaller run)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.registry import RETRIEVAL_MODES
from datafari_rag.security import UserAccess
from datafari_rag.security.acl import acl_params
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.solr.search import FORM, _form, secured_search
from datafari_rag.testing.acl_harness import (
    API,
    EVERY_TOKEN,
    LAYERS,
    Corpus,
    build,
    harness_settings,
    layers_off,
    leaked,
    one_trial,
    reference_allows,
)
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.overlap_cross_encoder import write_overlap_cross_encoder


@pytest.fixture(scope="module")
def acl_world(
    solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory, fake_llm_server: tuple[FakeLlm, str]
) -> tuple[Settings, Corpus, Path]:
    folder = tmp_path_factory.mktemp("acl")
    mine = settings.replace(collection_main="acl_FileShare", collection_vector="acl_VectorMain")
    bootstrap(solr, mine)
    corpus = build(random.Random(20261122), solr, mine, folder)
    return harness_settings(mine, folder, fake_llm_server[1]), corpus, folder


def test_reference_rule_examples() -> None:
    assert reference_allows(frozenset(), {})
    assert not reference_allows(frozenset(), {"allow_token_document": ["a"]})
    assert reference_allows(frozenset({"a"}), {"allow_token_document": ["a"]})
    assert not reference_allows(frozenset({"a", "d"}), {"allow_token_document": ["a"], "deny_token_share": ["d"]})
    assert not reference_allows(frozenset({"a"}), {"deny_token_parent": ["d"]})  # deny-only level: nobody


def _ids(solr: SolrClient, path: str, params: list[tuple[str, str]]) -> set[str]:
    form = [("q", "id:acl-*"), ("defType", "lucene"), ("rows", "1000"), ("fl", "id"), *params]
    return {d["id"] for d in solr.request("POST", path, data=_form(form), headers=FORM)["response"]["docs"]}


def test_each_layer_alone_and_both_match_the_reference_on_random_users(
    solr: SolrClient, acl_world: tuple[Settings, Corpus, Path]
) -> None:
    """Two independent layers: the sidecar's filter (its own fq, on the handler Solr does not
    filter) and Solr's ``{!manifoldCFSecurity}`` (the user named, no fq from the sidecar) each give
    exactly the reference's readable set for every user of the mapping, and so do both together."""
    settings, corpus, _ = acl_world
    fs = settings.collection_main
    users: list[str | None] = [*corpus.users, None]
    for user in users:
        tokens = corpus.users.get(user, frozenset()) if user else frozenset()
        expected = {i for i, doc in corpus.docs.items() if reference_allows(tokens, doc)}
        access = UserAccess(user, tokens)
        sidecar_fq = [p for p in acl_params(access) if not p[0].startswith("Authenticated")]
        named = [p for p in acl_params(access) if p[0].startswith("Authenticated")]
        assert _ids(solr, f"{fs}/internal", sidecar_fq) == expected, ("sidecar layer", user)
        assert _ids(solr, f"{fs}/select", named) == expected, ("Solr layer", user)
        both = secured_search(
            solr, fs, "select", {"q": "id:acl-*", "defType": "lucene", "rows": 1000, "fl": "id"}, access
        )
        assert {d["id"] for d in both["response"]["docs"]} == expected, ("both layers", user)


def test_a_search_straight_to_solr_as_anonymous_sees_only_public_documents(
    solr: SolrClient, acl_world: tuple[Settings, Corpus, Path]
) -> None:
    settings, corpus, _ = acl_world
    public = {i for i, doc in corpus.docs.items() if reference_allows(frozenset(), doc)}
    assert public and public != set(corpus.docs)
    assert _ids(solr, f"{settings.collection_main}/select", []) == public
    # the filter is appended: a client's own fq, or none, cannot remove it
    assert _ids(solr, f"{settings.collection_main}/select", [("fq", "*:*")]) == public
    chunks = solr.request(
        "POST",
        f"{settings.collection_vector}/select",
        data=_form([("q", "*:*"), ("defType", "lucene"), ("rows", "10000"), ("fl", "parent_doc")]),
        headers=FORM,
    )["response"]["docs"]
    assert {c["parent_doc"] for c in chunks} == public


def random_trials(settings: Settings, corpus: Corpus, fake: FakeLlm, seed: int, trials: int) -> tuple[list, int]:
    """``trials`` random requests in each retrieval mode; (leaks, how many reached the LLM)."""
    clients = {m: create_app(settings.replace(retrieval_method=m)).test_client() for m in RETRIEVAL_MODES.names}
    rng = random.Random(seed)
    leaks: list[tuple[str, str]] = []
    exposed_some = 0
    for _ in range(trials):
        trial, leaked_ids = one_trial(rng, clients, corpus, fake)
        leaks += [(trial, d) for d in leaked_ids]
        exposed_some += bool(fake.prompts())
    return leaks, exposed_some


def test_no_leak_in_random_trials(acl_world: tuple[Settings, Corpus, Path], fake_llm: FakeLlm) -> None:
    settings, corpus, _ = acl_world
    leaks, exposed_some = random_trials(settings, corpus, fake_llm, 11, 300)
    assert leaks == [], leaks[:5]
    assert exposed_some > 50  # the trials did reach the LLM with readable documents


def test_no_leak_with_query_enhancement_reranking_and_context_assembly_on(
    acl_world: tuple[Settings, Corpus, Path], fake_llm: FakeLlm
) -> None:
    """The quality stages read more of the index (field values for self-querying, several queries,
    deeper retrieval for the reranker, neighbours from VectorMain): random trials with all of them
    on leak nothing either."""
    settings, corpus, folder = acl_world
    quality = settings.replace(
        rerank_enabled=True,
        rerank_backend="onnx",
        rerank_onnx_path=str(write_overlap_cross_encoder(folder / "cross-encoder")),
        context_neighbours=2,
        context_dedup=True,
        context_segment_max_chars=200,
        context_max_chunks_per_source=1,
        context_max_tokens=300,
        query_multi_query=2,
        query_hyde=True,
        query_self_query_fields="language,extension,source,last_modified",
    )
    leaks, exposed_some = random_trials(quality, corpus, fake_llm, 29, 150)
    assert leaks == [], leaks[:5]
    assert exposed_some > 25


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_alone_holds_and_the_harness_sees_leaks_with_both_off(
    acl_world: tuple[Settings, Corpus, Path], fake_llm: FakeLlm, monkeypatch: pytest.MonkeyPatch, layer: str
) -> None:
    """The controls: the sidecar's fq removed (Solr's layer alone), or Solr told a user who holds
    every token (the sidecar's layer alone): nothing leaks. Both off: the same trials must report
    leaks, or the harness is blind."""
    monkeypatch.setattr("datafari_rag.solr.search.acl_params", layers_off(layer))
    settings, corpus, _ = acl_world
    clients = {
        "bm25": create_app(settings).test_client(),
        "vector": create_app(settings.replace(retrieval_method="vector")).test_client(),
    }
    rng = random.Random(5)
    leaked = [d for _ in range(60) for d in one_trial(rng, clients, corpus, fake_llm)[1]]
    if layer == "both":
        assert len(leaked) > 10
    else:
        assert leaked == [], (layer, leaked[:5])


CACHE_QUERIES = ["pump valve safety", "boiler pressure inspection", "maintenance procedure filter", "valve pump"]


def _cached_trials(rng: random.Random, app: Any, corpus: Corpus, fake: FakeLlm, trials: int) -> list[str]:
    """A user holding every token asks a few queries first; then random users ask them over and
    over through the semantic cache; every byte the LLM and the client got is checked against the
    reference rule."""
    client = app.test_client()
    for query in CACHE_QUERIES:  # first asked by a user who reads almost everything: the worst cache to share
        client.post(f"{API}/ai/rag", json={"query": query}, headers={"X-Remote-User": EVERY_TOKEN})
    leaks: list[str] = []
    for _ in range(trials):
        user = rng.choice([*corpus.users, None])
        tokens = corpus.users.get(user, frozenset()) if user else frozenset()
        headers = {"X-Remote-User": user} if user else {}
        fake.reset()
        query = rng.choice(CACHE_QUERIES)
        kind = rng.choice(["ai/rag", "ai/stream", "ai"])
        body = {"q": query} if kind == "ai" else {"query": query}
        response = client.post(f"{API}/{kind}", json=body, headers=headers)
        seen = "\n".join(fake.prompts()) + response.get_data(as_text=True)
        leaks += [f"{kind}/{user}/{d}" for d in leaked(seen, tokens, corpus)]
    return leaks


@pytest.mark.parametrize("method", ["bm25", "rrf"])
def test_no_leak_through_the_semantic_cache(
    acl_world: tuple[Settings, Corpus, Path], fake_llm: FakeLlm, method: str
) -> None:
    """With the cache on, random users (some with the same tokens, most with different ones) ask
    the same few queries: the cache answers many of them, and never with a document the asking
    user may not read."""
    settings, corpus, _ = acl_world
    app = create_app(settings.replace(retrieval_method=method, cache_enabled=True, cache_threshold=0.9))
    leaks = _cached_trials(random.Random(23), app, corpus, fake_llm, 200)
    cache = app.extensions["datafari_rag"].pipeline.cache
    assert leaks == [], leaks[:5]
    assert cache.hits > 50 and cache.misses > 10, (cache.hits, cache.misses)


def test_the_cache_test_finds_leaks_when_the_scope_ignores_access(
    acl_world: tuple[Settings, Corpus, Path], fake_llm: FakeLlm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache shared across accesses (the scope without the user's tokens) must be caught."""
    monkeypatch.setattr("datafari_rag.retrieval.cache.access_key", lambda access: "everyone")
    settings, corpus, _ = acl_world
    app = create_app(settings.replace(cache_enabled=True, cache_threshold=0.9))
    assert len(_cached_trials(random.Random(23), app, corpus, fake_llm, 200)) > 10


AGENT_TOOLS = ["hybrid_search", "bm25_search", "search_in_document", "read_document", "summarize"]


def test_no_leak_through_the_agentic_tools(acl_world: tuple[Settings, Corpus, Path], fake_llm: FakeLlm) -> None:
    """Random users in the agentic mode; the model calls a random tool with random arguments:
    nothing any tool returns, to the model or to the user, is a document the user may not read."""
    settings, corpus, _ = acl_world
    client = create_app(settings).test_client()
    rng = random.Random(41)
    leaks: list[str] = []
    for _ in range(80):
        user = rng.choice([*corpus.users, None])
        tokens = corpus.users.get(user, frozenset()) if user else frozenset()
        doc_id = rng.choice(list(corpus.docs))
        name = rng.choice(AGENT_TOOLS)
        arguments = {
            "hybrid_search": {"query": "pump valve safety"},
            "bm25_search": {"query": "pump valve safety"},
            "search_in_document": {"id": doc_id, "query": "pump valve safety"},
            "read_document": {"id": doc_id},
            "summarize": {"id": doc_id},
        }[name]
        replies = [{"tool_calls": [{"name": name, "arguments": arguments}]}, "Done."]
        fake_llm.reset(lambda prompt, r=replies: r.pop(0) if len(r) > 1 else r[0])
        headers = {"X-Remote-User": user} if user else {}
        response = client.post(f"{API}/ai/rag", json={"query": "pumps?", "search_type": "agentic"}, headers=headers)
        seen = "\n".join(fake_llm.prompts()) + response.get_data(as_text=True)
        leaks += [f"{name}/{user}/{d}" for d in leaked(seen, tokens, corpus, doc_id)]
    assert leaks == [], leaks[:5]
