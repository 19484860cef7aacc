"""The ACL filter as parameters, without Solr: constant text, tokens only in dereferenced parameters."""

from __future__ import annotations

import pytest

from datafari_rag.security.acl import NO_SECURITY, SEPARATOR, UserAccess, acl_params
from datafari_rag.solr.search import _secured_request


def test_anonymous_sees_only_fully_public_documents() -> None:
    [(name, fq)] = acl_params(UserAccess.anonymous())
    assert name == "fq"
    for level in ("share", "parent", "document"):
        assert f"(allow_token_{level}:{NO_SECURITY} AND deny_token_{level}:{NO_SECURITY})" in fq
    assert "$acl_tokens" not in fq


def test_tokens_never_enter_the_query_text() -> None:
    odd = {"a:b", "c\\d", 'e"f', "g h", "i,j", "k}{!l"}
    params = dict(acl_params(UserAccess("alice", frozenset(odd))))
    assert all(token not in params["fq"] for token in odd)
    assert set(params["acl_tokens"].split(params["acl_sep"])) == odd
    assert params["acl_sep"] == SEPARATOR
    assert params["fq"].count("v=$acl_tokens") == 6  # allow and deny at three levels


def test_tokens_that_could_widen_the_filter_are_dropped() -> None:
    params = dict(acl_params(UserAccess("bob", frozenset({"", NO_SECURITY, f"x{SEPARATOR}y", "staff"}))))
    assert params["acl_tokens"] == "staff"
    only_bad = acl_params(UserAccess("eve", frozenset({"", NO_SECURITY})))
    # the same filter as anonymous; Solr's layer is still told who asks
    assert only_bad == [*acl_params(UserAccess.anonymous()), ("AuthenticatedUserName", "eve")]


def test_solr_is_told_the_user_and_groups_never_by_the_indexer() -> None:
    params = acl_params(UserAccess("carol", frozenset({"t"}), groups=("finance", "hr")))
    assert [p for p in params if p[0].startswith("Authenticated")] == [
        ("AuthenticatedUserName", "carol"),
        ("AuthenticatedUserGroup", "finance"),
        ("AuthenticatedUserGroup", "hr"),
    ]
    assert acl_params(UserAccess.indexer()) == []
    assert not any(p[0].startswith("Authenticated") for p in acl_params(UserAccess.anonymous()))


def test_the_filter_text_is_the_same_for_every_user_with_tokens() -> None:
    one = dict(acl_params(UserAccess("a", frozenset({"t1"}))))["fq"]
    other = dict(acl_params(UserAccess("b", frozenset({"t2", "t3"}))))["fq"]
    assert one == other


def test_only_the_indexer_is_unrestricted() -> None:
    assert acl_params(UserAccess.indexer()) == []
    assert not UserAccess("root", frozenset({"*"})).unrestricted


def test_only_the_indexers_real_time_gets_may_name_shards() -> None:
    """``shards`` could send a search anywhere: only the indexer's own gets on a routed collection
    name them (the shard names Solr's CLUSTERSTATUS gave)."""
    path, body = _secured_request("VectorMain", "get", [("id", "a_0"), ("shards", "shard1")], UserAccess.indexer())
    assert path == "VectorMain/get" and b"shards=shard1" in body
    for handler, access in (("get", UserAccess("alice", frozenset({"t"}))), ("select", UserAccess.indexer())):
        with pytest.raises(ValueError, match="'shards' cannot be set"):
            _secured_request("VectorMain", handler, [("q", "*:*"), ("shards", "shard1")], access)
    with pytest.raises(ValueError, match="'_route_' cannot be set"):
        _secured_request("VectorMain", "get", [("id", "a_0"), ("_route_", "a")], UserAccess.indexer())
