"""The ACL filter against an independent reference, and the leak harness (a smaller run)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.security import UserAccess
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.solr.search import secured_search
from datafari_rag.testing.acl_harness import POOL, Corpus, build, harness_settings, one_trial, reference_allows
from datafari_rag.testing.fake_llm import FakeLlm


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


def test_the_solr_filter_matches_the_reference_on_random_users(
    solr: SolrClient, acl_world: tuple[Settings, Corpus, Path]
) -> None:
    settings, corpus, _ = acl_world
    rng = random.Random(7)
    users = [frozenset(rng.sample(POOL, rng.randint(0, 5))) for _ in range(60)] + [frozenset()]
    for tokens in users:
        found = secured_search(
            solr,
            settings.collection_main,
            "select",
            {"q": "id:acl-*", "defType": "lucene", "rows": 1000, "fl": "id"},
            UserAccess("u", tokens),
        )
        got = {d["id"] for d in found["response"]["docs"]}
        expected = {i for i, doc in corpus.docs.items() if reference_allows(tokens, doc)}
        assert got == expected, sorted(tokens)


def test_no_leak_in_random_trials(acl_world: tuple[Settings, Corpus, Path], fake_llm: FakeLlm) -> None:
    settings, corpus, _ = acl_world
    clients = {m: create_app(settings.replace(retrieval_method=m)).test_client() for m in ("bm25", "vector", "rrf")}
    rng = random.Random(11)
    leaks = []
    exposed_some = 0
    for _ in range(300):
        trial, leaked = one_trial(rng, clients, corpus, fake_llm)
        leaks += [(trial, d) for d in leaked]
        exposed_some += bool(fake_llm.prompts())
    assert leaks == [], leaks[:5]
    assert exposed_some > 50  # the trials did reach the LLM with readable documents


def test_the_harness_finds_leaks_when_the_filter_is_off(
    acl_world: tuple[Settings, Corpus, Path], fake_llm: FakeLlm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the ACL filter, the same trials must report leaks: the harness is not blind."""
    monkeypatch.setattr("datafari_rag.solr.search.acl_params", lambda access: [])
    settings, corpus, _ = acl_world
    clients = {"bm25": create_app(settings).test_client()}
    rng = random.Random(3)
    leaked = [d for _ in range(60) for d in one_trial(rng, clients, corpus, fake_llm)[1]]
    assert len(leaked) > 10
