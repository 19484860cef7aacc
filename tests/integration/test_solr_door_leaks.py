"""The Solr-direct leak harness on the session's secured Solr: random clients of Solr itself
(anonymous, Solr users who are the corpus's users, a stranger) × both collections and a
workflow's pair × every handler × every parameter family; parity with the sidecar; controls."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.acl_harness import build, harness_settings
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.solr_door_harness import FAMILIES, Door, add_workflow_pair, open_door, parity, run


@dataclass
class World:
    door: Door
    sidecar: Any  # the sidecar's test client on the same corpus and mapping


@pytest.fixture(scope="module")
def world(
    solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory, fake_llm_server: tuple[FakeLlm, str]
) -> World:
    if solr.auth is None:
        pytest.skip("the Solr under test is open (DATAFARI_RAG_SOLR_URL without DATAFARI_RAG_SOLR_PASSWORD)")
    folder = tmp_path_factory.mktemp("solr-door")
    mine = settings.replace(collection_main="sdh_FileShare", collection_vector="sdh_VectorMain")
    bootstrap(solr, mine)
    corpus = build(random.Random(20261124), solr, mine, folder, docs=60, users=12)
    workflow = add_workflow_pair(solr, mine, corpus, folder)  # made as the workflows API makes it
    pairs = [(mine.collection_main, mine.collection_vector), workflow]
    door = open_door(solr, solr.base_url, corpus, pairs)
    sidecar = create_app(harness_settings(mine, folder, fake_llm_server[1])).test_client()
    return World(door, sidecar)


def test_random_clients_of_solr_itself_read_only_what_their_user_may(world: World) -> None:
    tally = run(random.Random(7), world.door, 900)
    print(tally.line())
    assert not tally.leaks, tally.leaks[:5]
    # every kind of outcome was exercised: the grammar answered, the families refused, the rest denied
    assert min(tally.outcomes["answered"], tally.outcomes["refused"], tally.outcomes["denied"]) >= 50, tally.line()
    assert tally.outcomes["other"] == 0, tally.line()
    assert len(tally.families) == len(FAMILIES) + 2  # every family, the grammar and a JSON body


def test_solr_and_the_sidecar_give_each_user_the_reference_s_documents(world: World) -> None:
    assert parity(world.door, world.sidecar) == []


@pytest.mark.parametrize("control", ["guard", "filter", "both"])
def test_each_half_of_the_door_off_shows_leaks(world: World, control: str) -> None:
    """Not blind: with the guard off (the service account, not held to the grammar, naming the
    user), the filter off (a Solr user holding every token) or both, the same harness sees leaks."""
    tally = run(random.Random(11), world.door, 200, control)
    assert tally.leaks, f"{control} off: {tally.line()}"


def test_the_harness_reads_what_it_sends_as_an_echo_not_a_leak(world: World, tmp_path: Path) -> None:
    """A document's marker or id the client sent itself comes back in Solr's error: not a leak;
    the same marker in an answer the client did not ask with is one."""
    from datafari_rag.testing.solr_door_harness import leaked

    door = world.door
    hidden = next(d for d, doc in door.corpus.docs.items() if doc.get("allow_token_document"))
    marker = door.marker_of[hidden]
    assert leaked(door, frozenset(), f"bad query {marker.lower()}".encode(), [("q", marker.lower())]) == []
    assert leaked(door, frozenset(), f'{{"title":"{marker}"}}'.encode(), [("q", "*:*")]) == [hidden]
    assert leaked(door, frozenset(), b'{"allow_token_document":["t1"]}', []) == ["allow_token_"]
