"""/mcp's own OAuth authorization server for local users, driven by the official MCP SDK's OAuth
client as an MCP application would: from the first 401 to the protected-resource metadata, the
authorization-server metadata, dynamic registration, the product's sign-in page, the code for a
token with PKCE, and tool calls that run with the signed-in user's access (and nobody else's)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import random
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import jwt
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.store import StoreHandle
from datafari_rag.testing.acl_harness import (
    Corpus,
    build,
    harness_settings,
    random_tool_call,
    tool_leaks,
    tool_shows_documents,
)
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import serve
from tests.integration.conftest import MEMO, PASSWORD, signed_in_world

CALLBACK = "http://127.0.0.1:9/callback"  # never reached: the test reads the redirect itself


@pytest.fixture(scope="module")
def world(
    solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory, fake_llm_server: tuple[FakeLlm, str]
) -> Iterator[tuple[str, Settings]]:
    """bea may read the board's pay memo, otto may not; nobody is anonymous."""
    users = {"bea": False, "otto": False}
    mine = signed_in_world(solr, settings, tmp_path_factory.mktemp("oauth"), "oauth", users, sample=False)
    mine = mine.replace(anonymous_allowed=False, llm_endpoint=fake_llm_server[1])
    with serve(create_app(mine)) as url:
        yield url, mine


class Memory:
    """The client's token storage (the SDK's ``TokenStorage``), in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def _form_token(page: str) -> str:
    found = re.search(r'name="request" value="([^"]+)"', page)
    assert found, page
    return found.group(1)


class Browser:
    """The user's browser: follows ``/authorize`` to the sign-in page and fills it in."""

    def __init__(self, url: str, username: str, password: str, decision: str = "allow") -> None:
        self.url, self.username, self.password, self.decision = url, username, password, decision
        self.pages: list[httpx2.Response] = []
        self.landed = ""  # where the browser was sent back to

    async def open(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(timeout=30) as http:
            to_sign_in = await http.get(authorization_url)
            assert to_sign_in.status_code == 302, to_sign_in.text
            page = await http.get(to_sign_in.headers["location"])
            self.pages.append(page)
            form = {"request": _form_token(page.text), "username": self.username, "password": self.password}
            done = await http.post(f"{self.url}/oauth/sign-in", data={**form, "decision": self.decision})
            self.pages.append(done)
            self.landed = done.headers.get("location", "")

    async def callback(self) -> AuthorizationCodeResult:
        query = {k: v[0] for k, v in parse_qs(urlsplit(self.landed).query).items()}
        if "code" not in query:
            raise PermissionError(f"no code: {self.pages[-1].status_code} {query or self.pages[-1].text[:300]}")
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))


def connect(url: str, browser: Browser, storage: Memory, tool: str, arguments: dict[str, Any]) -> Any:
    """Calls one tool as an OAuth MCP client: the SDK discovers, registers, sends the browser to
    sign in and exchanges the code, or uses the tokens ``storage`` holds already."""

    async def run() -> Any:
        provider = OAuthClientProvider(
            server_url=f"{url}/mcp",
            client_metadata=OAuthClientMetadata(
                client_name="Test MCP client",
                redirect_uris=[CALLBACK],  # type: ignore[list-item]
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
            ),
            storage=storage,
            redirect_handler=browser.open,
            callback_handler=browser.callback,
        )
        async with (
            httpx2.AsyncClient(auth=provider, timeout=60) as http,
            Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
        ):
            return await client.call_tool(tool, arguments)

    return asyncio.run(run())


def _ids(result: Any) -> set[str]:
    assert not result.is_error, result.content
    return {d["id"] for d in result.structured_content["documents"]}


def test_an_mcp_client_signs_its_user_in_and_calls_tools_with_their_access(world: tuple[str, Settings]) -> None:
    url, settings = world
    bea, otto = Memory(), Memory()
    found = connect(url, Browser(url, "bea", PASSWORD), bea, "search", {"query": "board pay memo", "rows": 10})
    assert MEMO["id"] in _ids(found)
    assert bea.tokens and bea.tokens.refresh_token and bea.client and bea.client.client_secret
    claims = jwt.decode(bea.tokens.access_token, settings.jwt_hs256_secret, algorithms=["HS256"])
    assert claims["sub"] == "bea" and claims["client_id"] == bea.client.client_id
    # otto signs in through another client: his calls never see bea's memo
    found = connect(url, Browser(url, "otto", PASSWORD), otto, "search", {"query": "board pay memo", "rows": 10})
    assert MEMO["id"] not in _ids(found)
    # the token the client kept is used as it is: no second sign-in
    again = Browser(url, "nobody", "wrong")
    assert MEMO["id"] in _ids(connect(url, again, bea, "search", {"query": "board pay memo"})) and not again.pages


def test_the_metadata_names_the_service_as_its_own_authorization_server(world: tuple[str, Settings]) -> None:
    url, _ = world
    resource = httpx2.get(f"{url}/.well-known/oauth-protected-resource/mcp").json()
    assert resource["resource"] == f"{url}/mcp" and resource["authorization_servers"] == [url]
    server = httpx2.get(f"{url}/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == url and server["code_challenge_methods_supported"] == ["S256"]
    assert (server["authorization_endpoint"], server["token_endpoint"], server["registration_endpoint"]) == (
        f"{url}/authorize",
        f"{url}/token",
        f"{url}/register",
    )


def _registered(url: str) -> dict[str, Any]:
    answer = httpx2.post(
        f"{url}/register",
        json={"redirect_uris": [CALLBACK], "client_name": "by hand", "token_endpoint_auth_method": "none"},
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


def _authorize(url: str, client_id: str, verifier: str, **extra: str) -> httpx2.Response:
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": CALLBACK,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "s1",
        **extra,
    }
    return httpx2.get(f"{url}/authorize", params=params)


def _code(url: str, client_id: str, verifier: str, username: str = "bea") -> str:
    page = httpx2.get(_authorize(url, client_id, verifier).headers["location"])
    form = {"request": _form_token(page.text), "username": username, "password": PASSWORD, "decision": "allow"}
    done = httpx2.post(f"{url}/oauth/sign-in", data=form)
    assert done.status_code == 302, done.text
    query = parse_qs(urlsplit(done.headers["location"]).query)
    assert query["state"] == ["s1"] and query["iss"] == [url]
    return query["code"][0]


def _exchange(url: str, client_id: str, code: str, verifier: str) -> httpx2.Response:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": CALLBACK,
        "client_id": client_id,
        "code_verifier": verifier,
    }
    return httpx2.post(f"{url}/token", data=form)


def _tools(url: str, token: str) -> int:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    return httpx2.post(f"{url}/mcp", json=call, headers=headers).status_code


def test_a_code_needs_its_verifier_and_serves_once(world: tuple[str, Settings]) -> None:
    url, _ = world
    client = _registered(url)["client_id"]
    verifier = "v" * 64
    code = _code(url, client, verifier)
    wrong = _exchange(url, client, code, "w" * 64)
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    first = _exchange(url, client, code, verifier)
    assert first.status_code == 200 and _tools(url, first.json()["access_token"]) == 200
    replay = _exchange(url, client, code, verifier)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    other = _registered(url)["client_id"]  # a code is only for the client it was made for
    stolen = _exchange(url, other, _code(url, client, verifier), verifier)
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_grant"


def test_a_refresh_token_rotates_and_dies_with_the_password(world: tuple[str, Settings]) -> None:
    url, settings = world
    users = StoreHandle(settings).users()
    users.create("carl", PASSWORD, admin=False)
    client = _registered(url)["client_id"]
    tokens = _exchange(url, client, _code(url, client, "c" * 50, "carl"), "c" * 50).json()

    def refresh(token: str) -> httpx2.Response:
        return httpx2.post(
            f"{url}/token", data={"grant_type": "refresh_token", "refresh_token": token, "client_id": client}
        )

    renewed = refresh(tokens["refresh_token"])
    assert renewed.status_code == 200 and renewed.json()["refresh_token"] != tokens["refresh_token"]
    assert refresh(tokens["refresh_token"]).json()["error"] == "invalid_grant"  # used once
    users.update("carl", PASSWORD + " changed", None)
    assert _tools(url, renewed.json()["access_token"]) == 401
    assert refresh(renewed.json()["refresh_token"]).json()["error"] == "invalid_grant"


def test_the_sign_in_page_refuses_what_it_should(world: tuple[str, Settings]) -> None:
    url, _ = world
    client = _registered(url)["client_id"]
    to_page = _authorize(url, client, "x" * 50)
    page = httpx2.get(to_page.headers["location"])
    assert page.status_code == 200 and "by hand" in page.text and "http://127.0.0.1:9" in page.text
    assert (
        page.headers["X-Frame-Options"] == "DENY"
        and "form-action 'self' http://127.0.0.1:9" in page.headers["Content-Security-Policy"]
    )
    token = _form_token(page.text)
    wrong = httpx2.post(f"{url}/oauth/sign-in", data={"request": token, "username": "bea", "password": "nope"})
    assert wrong.status_code == 401 and "wrong" in wrong.text and "location" not in wrong.headers
    denied = httpx2.post(f"{url}/oauth/sign-in", data={"request": token, "decision": "deny"})
    assert parse_qs(urlsplit(denied.headers["location"]).query)["error"] == ["access_denied"]
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    refused = httpx2.post(f"{url}/oauth/sign-in", data={"request": forged, "username": "bea", "password": PASSWORD})
    assert refused.status_code == 400 and "location" not in refused.headers
    cross_site = httpx2.post(
        f"{url}/oauth/sign-in",
        data={"request": token, "username": "bea", "password": PASSWORD},
        headers={"Origin": "https://evil.example"},
    )
    assert cross_site.status_code == 403
    # the pending authorization the page carries is no sign-in token
    assert _tools(url, token) == 401
    # tokens are for this service only (RFC 8707)
    elsewhere = _authorize(url, client, "x" * 50, resource="https://other.example/mcp")
    assert parse_qs(urlsplit(elsewhere.headers["location"]).query)["error"] == ["invalid_target"]
    unknown = _authorize(url, "no-such-client", "x" * 50)
    assert unknown.status_code == 400 and json.loads(unknown.text)["error"] == "invalid_request"


def test_no_authorization_server_without_local_sign_in(world: tuple[str, Settings]) -> None:
    _, settings = world
    for changed in (settings.replace(jwt_hs256_secret=""), settings.replace(mcp_oauth_enabled=False)):
        with serve(create_app(changed)) as url:
            assert httpx2.get(f"{url}/.well-known/oauth-authorization-server").status_code == 404
            assert httpx2.post(f"{url}/register", json={"redirect_uris": [CALLBACK]}).status_code == 404
            assert "authorization_servers" not in httpx2.get(f"{url}/.well-known/oauth-protected-resource").json()


@pytest.fixture(scope="module")
def crowd(
    solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory, fake_llm_server: tuple[FakeLlm, str]
) -> Iterator[tuple[str, Corpus, dict[str, str]]]:
    """The random corpus of the leak harness, its users local accounts, each with a token its own
    MCP client obtained through the authorization server."""
    folder = tmp_path_factory.mktemp("oauth-crowd")
    mine = settings.replace(collection_main="oauthacl_FileShare", collection_vector="oauthacl_VectorMain")
    bootstrap(solr, mine)
    corpus = build(random.Random(11), solr, mine, folder, docs=40, users=10)
    served = harness_settings(mine, folder, fake_llm_server[1]).replace(
        jwt_hs256_secret="another test secret of at least thirty-two bytes",
        store_url=f"sqlite:///{folder / 'store.db'}",
        anonymous_allowed=False,
    )
    users = StoreHandle(served).users()
    for name in corpus.users:
        users.create(name, PASSWORD, admin=False)
    with serve(create_app(served)) as url:
        tokens = {}
        for name in corpus.users:
            client, verifier = _registered(url)["client_id"], f"verifier-of-{name}-" + "x" * 40
            tokens[name] = _exchange(url, client, _code(url, client, verifier, name), verifier).json()["access_token"]
        yield url, corpus, tokens


def _call_as(url: str, token: str, tool: str, arguments: dict[str, Any]) -> Any:
    async def run() -> Any:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
            Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
        ):
            return await client.call_tool(tool, arguments)

    return asyncio.run(run())


def _trials(
    crowd: tuple[str, Corpus, dict[str, str]], fake_llm: FakeLlm, seed: int, rounds: int, as_whom: Any
) -> tuple[list[str], int]:
    """Random users call random tools with their OAuth tokens (``as_whom(user)`` picks whose token
    is sent); every result and every prompt is checked against what ``user`` may read."""
    url, corpus, tokens = crowd
    rng = random.Random(seed)
    leaks: list[str] = []
    shown = 0
    for _ in range(rounds):
        user = rng.choice(list(corpus.users))
        tool, arguments, asked = random_tool_call(rng, corpus)
        fake_llm.reset()
        result = _call_as(url, tokens[as_whom(user)], tool, arguments)
        leaks += [
            f"{tool}/{user}/{d}" for d in tool_leaks(result, fake_llm.prompts(), corpus.users[user], corpus, asked)
        ]
        shown += tool_shows_documents(result)
    return leaks, shown


def test_random_users_signed_in_through_oauth_get_only_what_they_may_read(
    crowd: tuple[str, Corpus, dict[str, str]], fake_llm: FakeLlm
) -> None:
    leaks, shown = _trials(crowd, fake_llm, 41, 50, lambda user: user)
    assert leaks == [], leaks[:5]
    assert shown > 15  # the tools did return readable documents


def test_the_harness_sees_leaks_when_a_token_is_not_its_users(
    crowd: tuple[str, Corpus, dict[str, str]], fake_llm: FakeLlm
) -> None:
    """The control: every call sent with the token of the user who may read the most, checked
    against the user drawn — the same harness must find leaks, or it is blind."""
    _, corpus, _ = crowd
    widest = max(corpus.users, key=lambda u: len(corpus.users[u]))
    leaks, _ = _trials(crowd, fake_llm, 41, 50, lambda user: widest)
    assert leaks, "the harness found no leak with the widest user's token for everyone"
