""" "Did you mean" on the real Solr: a misspelt search gets a spelling that finds documents the user
may read, and never a word that only documents the user may not read hold."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap

API = "/Datafari/rest/v2.0"
GROUPS = ["g1", "g2", "g3", "g4"]


def pseudo_word(rng: random.Random) -> str:
    return rng.choice("bdfgklmnprstvz") + "".join(rng.choice(string.ascii_lowercase) for _ in range(7))


def typo(rng: random.Random, word: str) -> str:
    """One letter changed, past the first (Solr's spellchecker keeps the first letter)."""
    i = rng.randrange(2, len(word) - 1)
    return word[:i] + rng.choice([c for c in string.ascii_lowercase if c != word[i]]) + word[i + 1 :]


class World:
    def __init__(self, rng: random.Random) -> None:
        self.words: dict[str, set[str]] = {}  # word -> the groups that may read a document holding it ("*": all)
        self.docs: list[dict[str, Any]] = []
        self.users = {f"u{i}": sorted(rng.sample(GROUPS, rng.randint(0, 2))) for i in range(10)}
        for i in range(40):
            word = pseudo_word(rng)
            allowed = rng.sample(GROUPS, 1) if rng.random() < 0.6 else []
            self.words[word] = set(allowed) or {"*"}
            doc = {"id": f"dym-{i}", "title": f"Note {i}", "exactContent": f"The {word} was checked twice."}
            if allowed:
                doc["allow_token_document"] = allowed
            self.docs.append(doc)

    def readable(self, user: str | None, word: str) -> bool:
        groups = self.words.get(word, set())
        return "*" in groups or bool(groups & set(self.users.get(user, []) if user else []))


@pytest.fixture(scope="module")
def world(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, World]:
    folder: Path = tmp_path_factory.mktemp("dym")
    world = World(random.Random(7))
    (folder / "mapping.json").write_text(json.dumps({"users": world.users}))
    mine = settings.replace(
        collection_main="dym_FileShare",
        collection_vector="dym_VectorMain",
        mapping_file=str(folder / "mapping.json"),
        trusted_header="X-Remote-User",
        trusted_proxies="127.0.0.1",
    )
    bootstrap(solr, mine)
    assert all(r.status == "ok" for r in Indexer.of(solr, mine).add(world.docs, commit=True))
    return mine, world


def suggested(client: FlaskClient, query: str, user: str | None, **extra: str) -> str | None:
    headers = {"X-Remote-User": user} if user else {}
    body = client.get(f"{API}/search/select", query_string={"q": query, **extra}, headers=headers).get_json()
    collations = body.get("spellcheck", {}).get("collations", [])
    assert body["response"]["numFound"] == 0 or not collations  # only when nothing was found
    return collations[1] if collations else None


def trials(client: FlaskClient, world: World, seed: int, count: int) -> tuple[list[str], int]:
    """Random users search a typo of a random word: (the suggestions that named a word they may
    not read, how many suggestions they got at all)."""
    rng = random.Random(seed)
    leaks, given = [], 0
    for _ in range(count):
        user = rng.choice([*world.users, None])
        word = rng.choice(sorted(world.words))
        said = suggested(client, typo(rng, word), user)
        if said is None:
            continue
        given += 1
        leaks += [f"{user}:{w}" for w in said.split() if w in world.words and not world.readable(user, w)]
    return leaks, given


def test_a_typo_gets_the_spelling_of_a_readable_document(world: tuple[Settings, World]) -> None:
    settings, w = world
    client = create_app(settings).test_client()
    public = next(word for word, groups in w.words.items() if groups == {"*"})
    assert suggested(client, typo(random.Random(1), public), None) == public
    hidden = next(word for word, groups in w.words.items() if groups == {"g1"})
    reader = next(u for u, groups in w.users.items() if "g1" in groups)
    other = next(u for u, groups in w.users.items() if "g1" not in groups)
    misspelt = typo(random.Random(2), hidden)
    assert suggested(client, misspelt, reader) == hidden
    assert suggested(client, misspelt, other) is None and suggested(client, misspelt, None) is None
    # a filter of the page applies too: the spelling must find documents under it
    assert suggested(client, misspelt, reader, fq="id:nothing-matches") is None


def test_random_users_never_get_a_word_they_may_not_read(world: tuple[Settings, World]) -> None:
    settings, w = world
    leaks, given = trials(create_app(settings).test_client(), w, seed=11, count=80)
    assert leaks == []
    assert given > 20  # the harness sees suggestions: it is looking at something


def test_the_control_without_the_users_check_suggests_hidden_words(
    world: tuple[Settings, World], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness is not blind: with every proposal taken as found, it reports the leaks."""
    monkeypatch.setattr("datafari_rag.api.datafari.did_you_mean.finds_readable", lambda *args: True)
    settings, w = world
    leaks, _ = trials(create_app(settings).test_client(), w, seed=11, count=80)
    assert len(leaks) > 5, leaks
