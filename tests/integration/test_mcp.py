"""The MCP server with the official SDK's client, on a real Solr: its tools, identity as on the
REST API, refusals, and random users over random ACLs (every tool's output and every prompt
checked against the reference rule)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    extract_resource_metadata_from_www_auth,
)
from mcp.shared.auth import ProtectedResourceMetadata

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.acl_harness import (
    Corpus,
    build,
    harness_settings,
    random_tool_call,
    tool_leaks,
    tool_shows_documents,
)
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.mcp_client import call
from datafari_rag.testing.servers import serve


@pytest.fixture(scope="module")
def world(
    solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory, fake_llm_server: tuple[FakeLlm, str]
) -> Iterator[tuple[str, Corpus, Settings]]:
    folder = tmp_path_factory.mktemp("mcp")
    mine = settings.replace(collection_main="mcp_FileShare", collection_vector="mcp_VectorMain")
    bootstrap(solr, mine)
    corpus = build(random.Random(7), solr, mine, folder, docs=40, users=12)
    served = harness_settings(mine, folder, fake_llm_server[1])
    with serve(create_app(served)) as url:
        yield url, corpus, served


def test_the_four_tools_are_offered_with_their_schemas(world: tuple[str, Corpus, Settings]) -> None:
    url, corpus, _ = world
    tools = {t.name: t for t in call(url, next(iter(corpus.users))).tools}
    assert set(tools) == {"search", "vector_search", "rag", "summarize"}
    assert tools["rag"].input_schema["required"] == ["question"] and "lang" in tools["rag"].input_schema["properties"]
    assert tools["search"].input_schema["properties"]["rows"]["default"] == 10


def test_each_tool_answers_for_the_caller(world: tuple[str, Corpus, Settings], fake_llm: FakeLlm) -> None:
    url, corpus, _ = world
    user = max(corpus.users, key=lambda u: len(corpus.users[u]))
    found = call(url, user, "search", {"query": "pump valve safety", "rows": 5})
    assert not found.is_error and 0 < len(found.structured_content["documents"]) <= 5
    passages = call(url, user, "vector_search", {"query": "pump valve safety", "top_k": 3})
    assert not passages.is_error and len(passages.structured_content["passages"]) <= 3
    fake_llm.reset(lambda prompt: "The pump is checked [1].\nSOURCES_USED: 1")
    answer = call(url, user, "rag", {"question": "How is the pump checked?"}).structured_content
    assert answer["answer"] == "The pump is checked [1]." and answer["references"][0]["number"] == 1
    assert answer["usage"]["total_tokens"] > 0 and fake_llm.prompts()
    doc = found.structured_content["documents"][0]["id"]
    fake_llm.reset(lambda prompt: "A short summary.")
    assert call(url, user, "summarize", {"id": doc}).structured_content == {"summary": "A short summary."}


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("search", {"query": "   "}, "'query' must not be empty"),
        ("search", {"query": "pump", "rows": 0}, "'rows' must be between 1 and 50"),
        ("vector_search", {"query": "pump", "top_k": 500}, "'top_k' must be between 1 and 50"),
        ("rag", {"question": "x" * 5000}, "'question' is longer than"),
        ("rag", {"question": "pump", "lang": "klingon"}, "'lang' must be an ISO 639-1 code"),
        ("summarize", {"id": "no-such-document"}, "summarizationNoFileFound"),
    ],
)
def test_bad_calls_are_tool_errors_that_say_why(
    world: tuple[str, Corpus, Settings], tool: str, arguments: dict[str, Any], message: str
) -> None:
    url, corpus, _ = world
    result = call(url, next(iter(corpus.users)), tool, arguments)
    assert result.is_error and message in result.content[0].text and "Traceback" not in result.content[0].text


def test_an_identity_the_rest_api_refuses_is_refused_here(
    world: tuple[str, Corpus, Settings], solr: SolrClient
) -> None:
    _, _, served = world
    with serve(create_app(served.replace(anonymous_allowed=False))) as url:
        response = httpx2.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert response.status_code == 401 and response.json()["content"]["error"]["label"] == "authenticationFailed"
        untrusted = httpx2.post(f"{url}/mcp", json={}, headers={"Authorization": "Bearer not-a-jwt"})
        assert untrusted.status_code == 401


def test_a_401_points_an_oauth_client_at_the_protected_resource_metadata(world: tuple[str, Corpus, Settings]) -> None:
    """RFC 9728: the 401 names the metadata document (WWW-Authenticate's resource_metadata, read
    with the SDK's own client helpers), which says what the resource is, how tokens are sent and
    which authorization server issues them (security.jwt.issuer)."""
    _, _, served = world
    issuer = "https://sso.example/realms/datafari"
    with serve(create_app(served.replace(anonymous_allowed=False, jwt_issuer=issuer))) as url:
        refused = httpx2.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert refused.status_code == 401
        where = extract_resource_metadata_from_www_auth(refused)
        assert where == f"{url}/.well-known/oauth-protected-resource/mcp"
        assert build_protected_resource_metadata_discovery_urls(where, f"{url}/mcp")[0] == where
        answer = httpx2.get(where)  # public: the client has no token yet
        assert answer.status_code == 200 and answer.headers["Content-Type"].startswith("application/json")
        document = ProtectedResourceMetadata.model_validate_json(answer.content)
        assert str(document.resource) == f"{url}/mcp" and document.bearer_methods_supported == ["header"]
        assert [str(a) for a in document.authorization_servers or []] == [issuer]
    with serve(create_app(served.replace(anonymous_allowed=False, jwt_issuer=""))) as url:
        bare = httpx2.get(f"{url}/.well-known/oauth-protected-resource").json()
        assert bare["resource"] == f"{url}/mcp" and "authorization_servers" not in bare


def test_random_users_get_only_what_they_may_read(world: tuple[str, Corpus, Settings], fake_llm: FakeLlm) -> None:
    """Random users (and anonymous callers) call random tools: every byte of every result and of
    every prompt the LLM received is checked against the reference rule."""
    url, corpus, _ = world
    rng = random.Random(31)
    leaks: list[str] = []
    shown = 0
    for _ in range(60):
        user = rng.choice([*corpus.users, None])
        tokens = corpus.users.get(user, frozenset()) if user else frozenset()
        tool, arguments, asked = random_tool_call(rng, corpus)
        fake_llm.reset()
        result = call(url, user, tool, arguments)
        leaks += [f"{tool}/{user}/{d}" for d in tool_leaks(result, fake_llm.prompts(), tokens, corpus, asked)]
        shown += tool_shows_documents(result)
    assert leaks == [], leaks[:5]
    assert shown > 20  # the tools did return readable documents
