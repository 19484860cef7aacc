"""The semantic cache on its own: scopes, similarity, time to live, size, index versions."""

from __future__ import annotations

import pytest

from datafari_rag.config import Settings
from datafari_rag.retrieval.base import Snippet
from datafari_rag.retrieval.cache import SemanticCache, access_key
from datafari_rag.security import UserAccess

VECTORS = {"pump valve": [1.0, 0.0], "valve pump": [0.99, 0.14], "boiler": [0.0, 1.0]}


class World:
    def __init__(self) -> None:
        self.now = 0.0
        self.version = 1
        self.retrieved = 0

    def cache(self, **settings: object) -> SemanticCache:
        return SemanticCache(
            Settings(cache_threshold=0.95, cache_ttl=60, cache_max_entries=3, cache_version_check=0, **settings),
            lambda q: VECTORS[q],
            lambda: self.version,
            clock=lambda: self.now,
        )

    def results(self, tag: str) -> list[Snippet]:
        self.retrieved += 1
        return [Snippet(f"doc-{tag}", "t", "u", "text")]


def test_a_close_query_in_the_same_scope_hits_and_another_scope_never() -> None:
    world = World()
    cache = world.cache()
    assert cache.get("alice", "pump valve", lambda: world.results("a")) == (world.results("a"), False)
    found, hit = cache.get("alice", "valve pump", lambda: world.results("never"))
    assert hit and found[0].id == "doc-a"
    assert cache.get("bob", "valve pump", lambda: world.results("b"))[1] is False  # other access: retrieved
    assert cache.get("alice", "boiler", lambda: world.results("c"))[1] is False  # not similar enough


def test_entries_expire_the_oldest_go_and_a_new_index_version_empties_the_cache() -> None:
    world = World()
    cache = world.cache()
    cache.get("s", "pump valve", lambda: world.results("a"))
    world.now = 61
    assert cache.get("s", "pump valve", lambda: world.results("b"))[1] is False  # expired
    for scope in ("x", "y", "z"):
        cache.get(scope, "boiler", lambda tag=scope: world.results(tag))
    assert cache.get("s", "pump valve", lambda: world.results("c"))[1] is False  # evicted (3 entries at most)
    assert cache.get("z", "boiler", lambda: world.results("never"))[1] is True
    world.version = 2
    assert cache.get("z", "boiler", lambda: world.results("d"))[1] is False  # the index changed


def test_a_cache_that_cannot_embed_is_skipped() -> None:
    world = World()
    cache = world.cache()
    found, hit = cache.get("s", "unknown query", lambda: world.results("a"))
    assert (found[0].id, hit) == ("doc-a", False)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (UserAccess("a", frozenset({"t1"})), UserAccess("b", frozenset({"t1", "t2"}))),
        (UserAccess("a", frozenset({"t1"}), groups=("g",)), UserAccess("a", frozenset({"t1"}))),
        (UserAccess("a", frozenset()), UserAccess.indexer()),
        (UserAccess("a", frozenset({"a,b"})), UserAccess("a", frozenset({"a", "b"}))),
    ],
)
def test_the_access_key_tells_every_difference_apart(one: UserAccess, other: UserAccess) -> None:
    assert access_key(one) != access_key(other)
    assert access_key(one) == access_key(UserAccess("someone else", one.tokens, one.unrestricted, one.groups))
