"""Solr's own authentication and authorization for the product: BasicAuth with the sidecar's
service account, and rules that let anyone search ``/select`` and ``/vector`` (which append the
``{!manifoldCFSecurity}`` filter) and keep everything else to the service account.

``datafari-rag solr start`` (by default) starts a new local Solr with it; ``datafari-rag
bootstrap`` (by default) installs it in a Solr that has no authentication yet (Solr's CLI copies
it into ZooKeeper, where Solr watches it), or, in a Solr that has BasicAuth and rule-based
authorization already, adds the service account, its role and the two permissions through Solr's
authentication and authorization APIs, leaving the rest as the administrator made it.
:func:`check_door` is the start-up check every deployment command runs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from ..config import Settings
from . import admin
from .client import SolrClient, SolrError
from .service_account import ensure as service_account

SERVICE_ROLE = "datafari-rag-service"
PERMISSIONS: list[dict[str, Any]] = [
    # filtered by Solr itself: open to any client, each filtered as who it is
    {"name": "datafari-rag-secured-search", "collection": "*", "path": ["/select", "/vector"], "role": None},
    {"name": "all", "role": SERVICE_ROLE},
]


class SecurityProblem(RuntimeError):
    """Solr's security could not be set up as asked; the message says why and what to do."""


def credential(password: str, salt: bytes | None = None) -> str:
    """A BasicAuth credential as Solr's Sha256AuthenticationProvider stores it:
    base64(sha256(sha256(salt + password))), a space, base64(salt)."""
    salt = salt or os.urandom(32)
    digest = hashlib.sha256(hashlib.sha256(salt + password.encode("utf-8")).digest()).digest()
    return f"{base64.b64encode(digest).decode()} {base64.b64encode(salt).decode()}"


def security_config(settings: Settings) -> dict[str, Any]:
    """The whole security.json for a Solr that has none."""
    user, password = service_account(settings)
    return {
        "authentication": {
            "class": "solr.BasicAuthPlugin",
            "blockUnknown": False,  # anonymous clients may search, filtered as anonymous
            "credentials": {user: credential(password)},
            "forwardCredentials": False,
        },
        "authorization": {
            "class": "solr.RuleBasedAuthorizationPlugin",
            "user-role": {user: [SERVICE_ROLE]},
            "permissions": PERMISSIONS,
        },
    }


def write_config(settings: Settings, path: Path) -> Path:
    """Writes security.json (owner-readable only: it holds the password's hash)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(security_config(settings), indent=2))
    path.chmod(0o600)
    return path


def install_in_zookeeper(path: Path, zk_host: str) -> None:
    """Copies ``path`` to ZooKeeper's /security.json with Solr's own CLI (the runtime's jars)."""
    from .process import LIB

    command = ["java", "-cp", f"{LIB}/*", "org.apache.solr.cli.SolrCLI", "zk", "cp"]
    command += [f"file:{path.resolve()}", "zk:/security.json", "-z", zk_host]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0:
        raise SecurityProblem(f"Could not copy {path} to ZooKeeper {zk_host}:\n{(done.stdout + done.stderr)[-2000:]}")


def secure(solr: SolrClient, settings: Settings, scratch: Path) -> str:
    """Makes Solr authenticate and authorize as described above; says what it did.

    ``solr`` is the client bootstrap uses: without credentials on a Solr with no authentication,
    with the service account's once Solr has them."""
    user, password = service_account(settings)
    anonymous = SolrClient(solr.base_url, auth=None)
    try:
        configured = bool(anonymous.get("admin/authentication").get("authentication", {}).get("class"))
    except SolrError as exc:
        if exc.status not in (401, 403):
            raise
        configured = True  # so secured that its security API is not open to anonymous clients
    if not configured:
        zk_host = admin.system_info(solr)["zk_host"]
        if not zk_host:
            raise SecurityProblem("Solr is not in SolrCloud mode: install security.json in its home by hand")
        install_in_zookeeper(write_config(settings, scratch / "security.json"), zk_host)
        _wait_enforced(anonymous)
        return "installed (BasicAuth, rule-based authorization)"
    service = SolrClient(solr.base_url, auth=(user, password))
    try:
        current = service.get("admin/authentication").get("authentication", {})
    except SolrError as exc:
        raise SecurityProblem(
            f"Solr already has authentication and does not let {user} in with solr.password ({exc.status}): "
            "an administrator adds the account (set-user) with the right to read security, then "
            "bootstrap adds its rules"
        ) from exc
    if "BasicAuth" not in str(current.get("class")):
        raise SecurityProblem(f"Solr authenticates with {current.get('class')}: add the service account {user} there")
    rules = service.get("admin/authorization").get("authorization", {})
    names = {p.get("name") for p in rules.get("permissions", [])}
    commands: dict[str, Any] = {"set-user-role": {user: [SERVICE_ROLE]}}
    missing = [p for p in PERMISSIONS if p["name"] not in names]
    if missing:
        commands["set-permission"] = missing if len(missing) > 1 else missing[0]
    service.post("admin/authorization", json=commands)
    return f"updated: {user} has role {SERVICE_ROLE}; {len(missing)} permission(s) added"


def _wait_enforced(anonymous: SolrClient, timeout: float = 30.0) -> None:
    """Solr applies a new security.json from its ZooKeeper watch within a second or two."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            anonymous.get("admin/collections", {"action": "LIST"})
        except SolrError as exc:
            if exc.status in (401, 403):
                return
        time.sleep(0.3)
    raise SecurityProblem(f"Solr did not apply security.json within {timeout:.0f}s")


# Solr releases with the fixes the product's door relies on (CVE-2026-22022, CVE-2026-22444).
MINIMUM_VERSION = (9, 10, 1)


def check_door(solr: SolrClient, allow_open: bool = False) -> str:
    """The start-up check: refuses (SecurityProblem) a Solr older than 9.10.1, a Solr the service
    account cannot enter, a ``security.json`` without an ``all`` permission (every path no
    permission names would be open to anyone), and, unless ``allow_open`` (the development
    switch), a Solr without authentication. ``solr`` carries the service account. Says what it saw."""
    try:
        version = admin.system_info(solr)["version"]
    except SolrError as exc:
        if exc.status in (401, 403):
            raise SecurityProblem(
                f"Solr at {solr.base_url} refuses the service account ({exc.status}): set solr.username and "
                "solr.password (or solr.passwordFile) to the account Solr's security.json names"
            ) from exc
        raise
    if parse_version(version) < MINIMUM_VERSION:
        raise SecurityProblem(
            f"Solr {version} at {solr.base_url} is older than 9.10.1, which fixes CVE-2026-22022 and "
            "CVE-2026-22444: upgrade Solr"
        )
    authentication = solr.get("admin/authentication").get("authentication", {}).get("class")
    if not authentication:
        if allow_open:
            return f"Solr {version}, OPEN (no authentication; development only)"
        raise SecurityProblem(
            f"Solr at {solr.base_url} has no authentication: any client that reaches it reads every "
            "document. Run `datafari-rag bootstrap` (it secures Solr), or pass --insecure for a "
            "development Solr (docs/security.md#solr)"
        )
    rules = solr.get("admin/authorization").get("authorization", {})
    everything = [p for p in rules.get("permissions", []) if p.get("name") == "all"]
    if not everything or any(p.get("role") in (None, "*") for p in everything):
        raise SecurityProblem(
            f"Solr's security.json at {solr.base_url} has no 'all' permission for a role: every path no permission "
            "names (/get, /export, /update, the config APIs…) is open to anyone. Add "
            '{"name": "all", "role": "<an administrators\' role>"} last (docs/security.md#solr)'
        )
    return f"Solr {version}, {authentication.rsplit('.', 1)[-1]}, {rules.get('class', 'no authorization')} with 'all'"


def parse_version(text: str) -> tuple[int, ...]:
    """9.10.1 → (9, 10, 1); a suffix (9.11.0-SNAPSHOT) is ignored."""
    parts = []
    for part in text.split("-")[0].split(".")[:3]:
        parts.append(int(part) if part.isdigit() else 0)
    return tuple(parts)
