"""The security.json the product writes for Solr, without Solr (the integration test logs in with it)."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from datafari_rag.cli import main
from datafari_rag.config import Settings
from datafari_rag.solr.security_json import SecurityProblem, credential, security_config, write_config


def test_the_credential_is_solrs_double_sha256_with_its_salt() -> None:
    hashed, salt = credential("pw", salt=b"0123456789abcdef").split(" ")
    assert base64.b64decode(salt) == b"0123456789abcdef"
    inner = hashlib.sha256(b"0123456789abcdefpw").digest()
    assert base64.b64decode(hashed) == hashlib.sha256(inner).digest()
    assert credential("pw") != credential("pw")  # a fresh salt each time


def test_only_the_secured_handlers_are_open_and_the_rest_is_the_service_accounts(tmp_path: Path) -> None:
    path = write_config(Settings(solr_password="s3cret"), tmp_path / "security.json")
    written = json.loads(path.read_text())
    assert path.stat().st_mode & 0o777 == 0o600
    assert list(written["authentication"]["credentials"]) == ["datafari-rag"]
    assert "s3cret" not in path.read_text()
    assert written["authentication"]["blockUnknown"] is False
    permissions = written["authorization"]["permissions"]
    assert permissions[0]["path"] == ["/select", "/vector"] and permissions[0]["role"] is None
    assert permissions[-1] == {"name": "all", "role": "datafari-rag-service"}
    assert written["authorization"]["user-role"] == {"datafari-rag": ["datafari-rag-service"]}
    named = security_config(Settings(solr_username="svc", solr_password="x"))
    assert list(named["authentication"]["credentials"]) == ["svc"]


def test_securing_without_a_password_is_refused_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SecurityProblem, match=r"Set solr\.password"):
        security_config(Settings())
    monkeypatch.setenv("DATAFARI_RAG_SOLR_PASSWORD", "")
    result = CliRunner().invoke(main, ["solr", "start", "--secure"])
    assert result.exit_code == 1 and "Set solr.password" in result.output and "Traceback" not in result.output
