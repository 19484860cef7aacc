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
from datafari_rag.services import solr_client
from datafari_rag.solr import security_json, service_account
from datafari_rag.solr.security_json import credential, security_config, write_config


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


def test_without_a_password_one_is_generated_once_kept_0600_and_read_by_the_sidecar(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DATAFARI_RAG_VAR", str(tmp_path))
    settings = Settings()
    assert service_account.credentials(settings) is None  # nothing yet: an open, development Solr
    user, password = security_json.service_account(settings)
    path = tmp_path / "secrets" / "solr-service.password"
    assert user == "datafari-rag" and len(password) >= 24 and path.read_text().strip() == password
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert service_account.ensure(settings) == (user, password)  # kept, not made again
    assert solr_client(settings).auth == (user, password)  # what the sidecar sends Solr
    assert service_account.credentials(settings.replace(solr_password="set")) == (user, "set")  # the key wins
    own = tmp_path / "elsewhere.password"
    assert service_account.ensure(settings.replace(solr_password_file=str(own)))[1] == own.read_text().strip()


def test_the_security_json_command_writes_the_file_and_never_prints_the_password(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DATAFARI_RAG_VAR", str(tmp_path))
    result = CliRunner().invoke(main, ["solr", "security-json", "--output", str(tmp_path / "s.json")])
    password = (tmp_path / "secrets" / "solr-service.password").read_text().strip()
    assert result.exit_code == 0 and password not in result.output and "datafari-rag" in result.output
    assert json.loads((tmp_path / "s.json").read_text())["authorization"]["permissions"][-1]["name"] == "all"


@pytest.mark.parametrize(
    ("text", "old"),
    [
        ("9.10.1", False),
        ("9.10.0", True),
        ("9.9.2", True),
        ("9.11.0-SNAPSHOT", False),
        ("10.0.0", False),
        ("8.11.4", True),
    ],
)
def test_solr_older_than_9_10_1_is_too_old(text: str, old: bool) -> None:
    assert (security_json.parse_version(text) < security_json.MINIMUM_VERSION) is old
