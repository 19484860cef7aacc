"""The differential oracle harness (datafari_rag/testing/oracle_harness.py) on the session's
secured Solr: no answer, straight from Solr or through any surface of the sidecar, tells a word of
a document the client may not read from a word no document holds; with the door's judgement off,
the harness finds the oracle (it is not blind)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient
from datafari_rag.solr.collection import Collection
from datafari_rag.testing.acl_harness import API, harness_settings
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.oracle_harness import (
    judgement_off,
    mcp_surfaces,
    solr_direct,
    through_sidecar,
    workflow_surface,
)
from datafari_rag.testing.servers import serve
from datafari_rag.testing.solr_door_harness import Door, corpus_door

ADMIN = "oracle-admin"


@dataclass
class World:
    door: Door
    sidecar: Any
    main: Collection
    users: list[str]
    extra: dict[str, Any]  # the MCP tools and a workflow's query


@pytest.fixture(scope="module")
def world(
    solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory, fake_llm_server: tuple[FakeLlm, str]
) -> Iterator[World]:
    if solr.auth is None:
        pytest.skip("the Solr under test is open (DATAFARI_RAG_SOLR_URL without DATAFARI_RAG_SOLR_PASSWORD)")
    folder: Path = tmp_path_factory.mktemp("oracle")
    door, mine = corpus_door(solr, settings, folder, "orc", seed=20261207)
    corpus = door.corpus
    served = harness_settings(mine, folder, fake_llm_server[1])
    served = served.replace(store_url=f"sqlite:///{folder / 's.db'}", admins=ADMIN)
    users = sorted(u for u, t in corpus.users.items() if t)[:2]
    sidecar = create_app(served).test_client()
    admin = {"X-Remote-User": ADMIN}
    made = sidecar.post(f"{API}/workflows", json={"name": "oracle"}, headers=admin).get_json()["content"]["workflow"]
    keys = {}
    for user in users:
        key = sidecar.post(f"{API}/workflows/{made['id']}/keys", json={"username": user}, headers=admin)
        keys[user] = key.get_json()["content"]["secret"]
    with serve(create_app(served)) as url:
        extra = {**mcp_surfaces(url), **workflow_surface(made["id"], keys)}
        yield World(door, sidecar, Collection(solr, mine.collection_main), users, extra)


def test_straight_from_solr_no_answer_tells_an_unreadable_word_from_an_absent_one(world: World) -> None:
    clients = [world.door.clients[0], next(c for c in world.door.clients if c.name == world.users[0])]
    tally = solr_direct(random.Random(1), world.door, clients)
    print("Solr direct:", tally.line())
    assert tally.pairs > 500 and tally.outcomes.get("answered", 0) > 50
    assert tally.oracles == [], tally.oracles[:5]


def test_straight_from_solr_the_control_finds_the_oracle(world: World) -> None:
    tally = solr_direct(random.Random(1), world.door, world.door.clients[:1], control=True)
    print("Solr direct, door's judgement off:", tally.line())
    assert len(tally.oracles) > 0


def test_through_the_sidecar_no_answer_tells_an_unreadable_word_from_an_absent_one(world: World) -> None:
    tally = through_sidecar(random.Random(2), world.sidecar, world.main, world.door.corpus, world.users, world.extra)
    print("sidecar:", tally.line())
    assert tally.outcomes.get("answered", 0) > 50
    assert tally.oracles == [], tally.oracles[:5]


def test_through_the_sidecar_the_control_finds_the_oracle(world: World) -> None:
    with judgement_off():
        tally = through_sidecar(random.Random(2), world.sidecar, world.main, world.door.corpus, world.users[:1])
    print("sidecar, door's judgement off:", tally.line(), sorted({o[0] for o in tally.oracles}))
    assert {o[0].split(" ", 1)[1] for o in tally.oracles} >= {"search/select fq", "results/export fq[]"}
