"""What `datafari-rag index --visibility` and index jobs add to documents without ACL fields."""

from __future__ import annotations

import click
import pytest

from datafari_rag.cli import _visibility_tokens
from datafari_rag.indexing.visibility import readable_by
from datafari_rag.security.authority import own_token


def test_each_visibility_gives_its_tokens_and_anything_else_is_refused() -> None:
    assert _visibility_tokens("public") is None
    assert _visibility_tokens("group:hr-team") == ["hr-team"]
    assert _visibility_tokens("user:alice") == [own_token("alice")]  # the web UI's "private" for alice
    for wrong in ("private", "group:", "user: ", "everyone", "Public"):
        with pytest.raises(click.BadParameter, match="public, group:<token> or user:<name>"):
            _visibility_tokens(wrong)


def test_documents_with_acl_fields_keep_them() -> None:
    protect = readable_by(["hr-team"])
    assert protect({"id": "a"}) == {"id": "a", "allow_token_document": ["hr-team"]}
    own = {"id": "b", "deny_token_share": ["interns"]}
    assert protect(own) == own
    assert readable_by(None)({"id": "c"}) == {"id": "c"}
