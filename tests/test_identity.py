"""Who the user is and which tokens they hold: JWT, trusted header, anonymous, authority; fail closed."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from flask import Flask
from werkzeug.datastructures import Headers

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.errors import DatafariError
from datafari_rag.security.acl import UserAccess
from datafari_rag.security.authority import own_token
from datafari_rag.security.identity import normalise, resolve_access
from datafari_rag.testing.servers import free_port, serve

SECRET = "a-test-secret-that-is-long-enough-for-hs256"


@pytest.fixture
def mapping(tmp_path: Path) -> Path:
    path = tmp_path / "mapping.json"
    path.write_text(json.dumps({"users": {"alice": ["hr"], "bob": ["staff"]}, "groups": {"finance": ["fin"]}}))
    return path


def access(settings: Settings, headers: dict[str, str] | None = None, remote: str = "127.0.0.1") -> UserAccess:
    return resolve_access(Headers(headers or {}), remote, settings)


def token(claims: dict[str, Any], key: Any = SECRET, algorithm: str = "HS256", **headers: Any) -> str:
    return jwt.encode({"exp": int(time.time()) + 300, **claims}, key, algorithm=algorithm, headers=headers or None)


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


def test_anonymous_is_allowed_or_refused(mapping: Path) -> None:
    settings = Settings(mapping_file=str(mapping))
    assert access(settings) == UserAccess.anonymous()
    with pytest.raises(DatafariError) as refused:
        access(settings.replace(anonymous_allowed=False))
    assert refused.value.code == 401


def test_hs256_jwt_with_groups(mapping: Path) -> None:
    settings = Settings(
        mapping_file=str(mapping),
        jwt_hs256_secret=SECRET,
        jwt_groups_claim="groups",
        jwt_audience="datafari",
        jwt_issuer="https://idp",
    )
    t = token({"preferred_username": "CORP\\alice", "groups": ["finance"], "aud": "datafari", "iss": "https://idp"})
    assert access(settings, bearer(t)) == UserAccess(
        "alice", frozenset({"hr", "fin", own_token("alice")}), groups=("finance",)
    )
    as_tokens = settings.replace(groups_as_tokens=True)
    assert access(as_tokens, bearer(t)).tokens == frozenset({"hr", "fin", "finance", own_token("alice")})


@pytest.mark.parametrize(
    ("claims", "key", "why"),
    [
        (
            {"preferred_username": "alice", "aud": "datafari"},
            "another-secret-another-secret-another-secret",
            "Signature",
        ),
        ({"preferred_username": "alice", "aud": "datafari", "exp": int(time.time()) - 10}, SECRET, "expired"),
        ({"preferred_username": "alice", "aud": "somebody-else"}, SECRET, "audience"),
        ({"preferred_username": "alice", "aud": "datafari", "iss": "https://evil"}, SECRET, "issuer"),
        ({"aud": "datafari", "sub": ""}, SECRET, "claim"),
    ],
)
def test_bad_tokens_are_refused(mapping: Path, claims: dict[str, Any], key: str, why: str) -> None:
    settings = Settings(
        mapping_file=str(mapping), jwt_hs256_secret=SECRET, jwt_audience="datafari", jwt_issuer="https://idp"
    )
    claims = {"iss": "https://idp", **claims}
    with pytest.raises(DatafariError, match=f"(?i){why}") as refused:
        access(settings, bearer(token(claims, key)))
    assert refused.value.code == 401


def test_unsigned_and_malformed_tokens_are_refused(mapping: Path) -> None:
    settings = Settings(mapping_file=str(mapping), jwt_hs256_secret=SECRET)
    unsigned = jwt.encode({"preferred_username": "alice", "exp": int(time.time()) + 60}, None, algorithm="none")
    for headers in (bearer(unsigned), bearer("not.a.jwt"), {"Authorization": "Basic YWxpY2U6eA=="}):
        with pytest.raises(DatafariError):
            access(settings, headers)
    # an empty or blank header is a failed sign-in (401), never an anonymous request
    for empty in ("", " ", "Bearer", "Bearer  "):
        with pytest.raises(DatafariError) as refused:
            access(settings, {"Authorization": empty})
        assert refused.value.code == 401
    assert access(settings, {}).username is None  # no header at all: anonymous, as before
    with pytest.raises(DatafariError, match="no JWT key"):
        access(Settings(mapping_file=str(mapping)), bearer(token({"preferred_username": "alice"})))


def test_rs256_public_key_and_es256_jwks(mapping: Path, tmp_path: Path) -> None:
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = rsa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    (tmp_path / "public.pem").write_bytes(pem)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(ec_key.public_key()))
    (tmp_path / "jwks.json").write_text(json.dumps({"keys": [{**jwk, "kid": "k1", "alg": "ES256", "use": "sig"}]}))
    settings = Settings(
        mapping_file=str(mapping),
        jwt_public_key_file=str(tmp_path / "public.pem"),
        jwt_jwks_file=str(tmp_path / "jwks.json"),
    )
    assert access(settings, bearer(token({"preferred_username": "alice"}, rsa_key, "RS256"))).username == "alice"
    assert access(settings, bearer(token({"preferred_username": "bob"}, ec_key, "ES256", kid="k1"))).username == "bob"
    other = ec.generate_private_key(ec.SECP256R1())
    with pytest.raises(DatafariError):
        access(settings, bearer(token({"preferred_username": "bob"}, other, "ES256", kid="k1")))
    with pytest.raises(DatafariError):  # an HS256 token signed with the public key text is not accepted
        access(settings, bearer(_hs256_by_hand({"preferred_username": "alice"}, pem)))


def _hs256_by_hand(claims: dict[str, Any], secret: bytes) -> str:
    """A token signed as the classic key-confusion attack does (PyJWT itself refuses to make one)."""
    import base64
    import hashlib
    import hmac

    def b64(data: bytes) -> bytes:
        return base64.urlsafe_b64encode(data).rstrip(b"=")

    body = {"exp": int(time.time()) + 300, **claims}
    signing = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + b"." + b64(json.dumps(body).encode())
    return (signing + b"." + b64(hmac.new(secret, signing, hashlib.sha256).digest())).decode()


def test_trusted_header_only_from_trusted_proxies(mapping: Path) -> None:
    settings = Settings(mapping_file=str(mapping), trusted_header="X-Remote-User", trusted_proxies="10.0.0.5")
    bob = UserAccess("bob", frozenset({"staff", own_token("bob")}))
    assert access(settings, {"X-Remote-User": "bob"}, remote="10.0.0.5") == bob
    with pytest.raises(DatafariError) as refused:
        access(settings, {"X-Remote-User": "alice"}, remote="10.0.0.6")
    assert refused.value.code == 403


def test_username_normalisation() -> None:
    settings = Settings(append_domain="corp.example")
    assert normalise("CORP\\alice", settings) == "alice@corp.example"
    assert normalise("bob@other.example", settings) == "bob@other.example"
    assert normalise("CORP\\alice", Settings(strip_domain=False)) == "CORP\\alice"


def _authority(calls: list[str], status: int = 200, body: str = "") -> Flask:
    app = Flask("authority")

    @app.get("/UserACLs")
    def user_acls() -> tuple[str, int]:
        from flask import request

        calls.append(request.args["username"])
        return (
            body or f"AUTHORIZED:ad\nTOKEN:ad:{request.args['username']}-token\nTOKEN:share-all\nUSERNOTFOUND:x\n",
            status,
        )

    return app


def test_manifoldcf_authority_tokens_and_cache(mapping: Path) -> None:
    calls: list[str] = []
    with serve(_authority(calls)) as url:
        settings = Settings(
            mapping_file=str(mapping),
            trusted_header="X-Remote-User",
            trusted_proxies="127.0.0.1",
            authority_url=url,
            authority_cache_ttl=60,
        )
        first = access(settings, {"X-Remote-User": "carol"})
        second = access(settings, {"X-Remote-User": "carol"})
    assert first.tokens == second.tokens == frozenset({"ad:carol-token", "share-all", own_token("carol")})
    assert calls == ["carol"]  # the second request was answered from the cache


@pytest.mark.parametrize("status", [500, 404])
def test_authority_errors_refuse_the_request(mapping: Path, status: int) -> None:
    with serve(_authority([], status=status)) as url:
        settings = Settings(
            mapping_file=str(mapping),
            trusted_header="X-Remote-User",
            trusted_proxies="127.0.0.1",
            authority_url=url,
            authority_cache_ttl=0,
        )
        with pytest.raises(DatafariError) as refused:
            access(settings, {"X-Remote-User": "dave"})
    assert refused.value.code == 503


def test_authority_down_refuses_the_request_over_http(mapping: Path) -> None:
    settings = Settings(
        mapping_file=str(mapping),
        trusted_header="X-Remote-User",
        trusted_proxies="127.0.0.1",
        authority_url=f"http://127.0.0.1:{free_port()}",
        authority_timeout=1,
        authority_cache_ttl=0,
    )
    client = create_app(settings).test_client()
    response = client.post("/Datafari/rest/v2.0/ai/rag", json={"query": "x"}, headers={"X-Remote-User": "erin"})
    body = response.get_json()
    assert response.status_code == 503 and body["status"] == "ERROR"
    assert body["content"]["error"]["label"] == "authorityUnavailable" and body["content"]["documents"] == []


def test_a_bad_token_is_refused_before_anything_is_searched(mapping: Path) -> None:
    settings = Settings(mapping_file=str(mapping), jwt_hs256_secret=SECRET, solr_url="http://127.0.0.1:9/solr")
    client = create_app(settings).test_client()
    for path, method in (
        ("/ai/rag", "post"),
        ("/ai/stream", "post"),
        ("/ai/summarize", "post"),
        ("/search/select?q=x", "get"),
        ("/search/vector?queryrag=x", "get"),
    ):
        response = getattr(client, method)(
            f"/Datafari/rest/v2.0{path}",
            json={"query": "x", "id": "d"},
            headers=bearer(token({"preferred_username": "alice"}, "wrong-" * 8)),
        )
        assert response.status_code == 401, path
        assert response.get_json()["content"]["error"]["label"] == "authenticationFailed"


def test_an_empty_authorization_or_an_api_key_where_none_is_taken_is_401_with_the_scheme(mapping: Path) -> None:
    """Never anonymous: a caller who sent credentials meant to be someone. Every 401 names the
    scheme that would be accepted (WWW-Authenticate), as OAuth-capable clients (MCP's) expect."""
    settings = Settings(mapping_file=str(mapping), jwt_hs256_secret=SECRET, solr_url="http://127.0.0.1:9/solr")
    client = create_app(settings).test_client()
    for headers in ({"Authorization": ""}, {"Authorization": "Bearer "}, {"X-API-Key": "some-key"}):
        for method, path in (
            ("get", "/Datafari/rest/v2.0/search/select?q=x"),
            ("post", "/Datafari/rest/v2.0/ai/rag"),
            ("post", "/mcp"),
        ):
            response = getattr(client, method)(path, json={"query": "x", "jsonrpc": "2.0", "id": 1}, headers=headers)
            assert response.status_code == 401, (headers, path, response.status_code)
            metadata = ', resource_metadata="http://localhost/.well-known/oauth-protected-resource/mcp"'
            expected = 'Bearer realm="datafari-rag"' + (metadata if path == "/mcp" else "")  # RFC 9728 for /mcp
            assert response.headers["WWW-Authenticate"] == expected
            error = response.get_json()["content"]["error"]
            assert error["label"] == "authenticationFailed", (headers, path)


def test_updates_need_a_listed_user_or_an_administrator_and_trust_this_machine_only_when_asked(
    mapping: Path, tmp_path: Path
) -> None:
    settings = Settings(
        store_url=f"sqlite:///{tmp_path / 'store.db'}",
        mapping_file=str(mapping),
        solr_url="http://127.0.0.1:9/solr",
        trusted_header="X-User",
        trusted_proxies="10.0.0.5",
    )
    for remote in ("10.0.0.9", "127.0.0.1"):  # a local reverse proxy makes every client local
        refused = create_app(settings).test_client().post("/update", json=[], environ_base={"REMOTE_ADDR": remote})
        assert refused.status_code == 401 and refused.get_json()["content"]["error"]["label"] == "authenticationFailed"
    trusting = create_app(settings.replace(update_trust_local=True)).test_client()
    assert trusting.post("/update", json=[], environ_base={"REMOTE_ADDR": "127.0.0.1"}).status_code == 200
    assert trusting.post("/update", json=[], environ_base={"REMOTE_ADDR": "10.0.0.9"}).status_code == 401
    listed = create_app(settings.replace(update_users="alice")).test_client()
    bob = listed.post("/update", json=[], headers={"X-User": "bob"}, environ_base={"REMOTE_ADDR": "10.0.0.5"})
    alice = listed.post("/update", json=[], headers={"X-User": "alice"}, environ_base={"REMOTE_ADDR": "10.0.0.5"})
    assert bob.status_code == 403 and alice.status_code == 200 and alice.get_json()["added"] == 0
    assert "administrators" in bob.get_json()["content"]["error"]["reason"]
    admin = create_app(settings.replace(update_users="alice", admins="carol")).test_client()
    for user, status in (("carol", 200), ("bob", 403)):  # an administrator may index; others still not
        sent = admin.post("/update", json=[], headers={"X-User": user}, environ_base={"REMOTE_ADDR": "10.0.0.5"})
        assert sent.status_code == status, (user, sent.get_json())


def test_the_model_store_is_never_proxied(mapping: Path) -> None:
    client = create_app(Settings(mapping_file=str(mapping))).test_client()
    for path in (
        "/Datafari/rest/v2.0/schema/text-to-vector-model-store",
        "/schema/text-to-vector-model-store",
        "/solr/VectorMain/schema/text-to-vector-model-store",
    ):
        assert client.get(path).status_code == 404
    vector = client.get("/Datafari/rest/v2.0/search/vector", query_string={"q": "x", "qt": "/schema"})
    assert vector.get_json()["content"]["error"]["label"] == "ragBadRequest"
