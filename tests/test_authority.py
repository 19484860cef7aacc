"""The ManifoldCF authority service, as ManifoldCF defines its UserACLs reply; anything else refuses."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask, Response, redirect
from werkzeug.datastructures import Headers

from datafari_rag.config import Settings
from datafari_rag.errors import DatafariError
from datafari_rag.security import resolve_access
from datafari_rag.security.authority import own_token, parse_user_acls
from datafari_rag.testing.servers import serve


def test_tokens_of_every_authority_status_that_answered() -> None:
    reply = "AUTHORIZED:ad\nTOKEN:ad:S-1-5-21\nUSERNOTFOUND:share\nTOKEN:share:everyone\nUNAUTHORIZED:x\nID:alice\n"
    assert parse_user_acls(reply) == frozenset({"ad:S-1-5-21", "share:everyone"})
    assert parse_user_acls("USERNOTFOUND:ad\n") == frozenset()  # known answer: no tokens


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("", "no authority status"),
        ("\n\n", "no authority status"),
        ("TOKEN:ad:x\n", "no authority status"),
        ("<html>Bad gateway</html>", "does not define"),
        ("AUTHORIZED:ad\nTOKEN:ad:x\nUNREACHABLEAUTHORITY:share\n", "could not reach share"),
        ("AUTHORIZED:ad\nTOKENS:ad:x\n", "does not define"),
        ("AUTHORIZED:ad\nTOKEN:\n", "empty token"),
    ],
)
def test_an_untrustworthy_reply_refuses(reply: str, why: str) -> None:
    with pytest.raises(DatafariError, match=why) as refused:
        parse_user_acls(reply)
    assert refused.value.label == "authorityUnavailable" and refused.value.code == 503


def _settings(url: str, mapping: Path, timeout: float = 2.0) -> Settings:
    return Settings(
        mapping_file=str(mapping),
        trusted_header="X-Remote-User",
        trusted_proxies="127.0.0.1",
        authority_url=url,
        authority_timeout=timeout,
        authority_cache_ttl=0,
    )


@pytest.fixture
def mapping(tmp_path: Path) -> Path:
    path = tmp_path / "mapping.json"
    path.write_text('{"users": {}, "groups": {}}')
    return path


def _lookup(settings: Settings) -> frozenset[str]:
    return resolve_access(Headers({"X-Remote-User": "carol"}), "127.0.0.1", settings).tokens


def test_a_redirect_is_not_followed(mapping: Path) -> None:
    app = Flask("authority")
    app.add_url_rule("/UserACLs", "acls", lambda: redirect("/elsewhere"))
    app.add_url_rule("/elsewhere", "elsewhere", lambda: "AUTHORIZED:ad\nTOKEN:ad:everything\n")
    with serve(app) as url, pytest.raises(DatafariError, match="HTTP 302"):
        _lookup(_settings(url, mapping))


def test_non_ascii_bytes_refuse(mapping: Path) -> None:
    app = Flask("authority")
    app.add_url_rule("/UserACLs", "acls", lambda: Response("AUTHORIZED:ad\nTOKEN:ad:caf\xe9\n".encode("latin-1")))
    with serve(app) as url, pytest.raises(DatafariError, match="not ASCII"):
        _lookup(_settings(url, mapping))


def test_a_dripping_authority_is_cut_at_the_deadline(mapping: Path) -> None:
    app = Flask("authority")

    def drip() -> Response:
        def body() -> Iterator[str]:
            yield "AUTHORIZED:ad\n"
            for _ in range(60):
                time.sleep(0.2)
                yield "TOKEN:ad:t\n"

        return Response(body(), mimetype="text/plain")

    app.add_url_rule("/UserACLs", "acls", drip)
    with serve(app) as url:
        began = time.monotonic()
        with pytest.raises(DatafariError, match="within 1 s"):
            _lookup(_settings(url, mapping, timeout=1.0))
        assert time.monotonic() - began < 2.0  # the reply would take 12 s


def test_a_well_formed_reply_is_answered(mapping: Path) -> None:
    app = Flask("authority")
    app.add_url_rule("/UserACLs", "acls", lambda: "AUTHORIZED:ad\nTOKEN:ad:carol-token\n")
    with serve(app) as url:
        assert _lookup(_settings(url, mapping)) == frozenset({"ad:carol-token", own_token("carol")})
