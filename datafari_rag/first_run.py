"""What ``datafari-rag run`` sets up on a machine where nothing is configured, so that the web UI
works without editing a file and shows what the product is for: a signing secret for local
sign-in (kept in ``var/secrets``, mode 0600), a first administrator and the demo users of the
shipped mapping file (``conf/acl-mapping.json``), whose generated passwords are shown once, and
the banner's question asked as two of them — the same question, answered from the documents
each may read."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

import urllib3

from .api.admin.users import signed_token
from .config import Settings
from .paths import kept_secret, var_dir
from .store.users import UserStore

FIRST_ADMIN = "admin"
DEMO_USERS = ("alice", "bob", "carol")  # HR manager, staff, finance team (their tokens: the mapping file)
QUESTION = "What raise will engineers get this year?"
ASKED_AS = ("alice", "bob")


def secret_file() -> Path:
    return var_dir() / "secrets" / "jwt-hs256.secret"


def signing_secret(settings: Settings) -> str:
    """``security.jwt.hs256.secret`` when configured, else the one kept in ``var/secrets``. None
    is made when an identity provider signs the tokens (``security.jwt.issuer``)."""
    if settings.jwt_hs256_secret or settings.jwt_issuer:
        return settings.jwt_hs256_secret
    return kept_secret(secret_file())[0]


def first_administrator(users: UserStore) -> tuple[str, str] | None:
    """(username, password) of an administrator created now because the store has no user at
    all; None when there is one already (the password was shown when it was made)."""
    if users.list():
        return None
    password = secrets.token_urlsafe(12)
    return users.create(FIRST_ADMIN, password, admin=True).username, password


@dataclass(frozen=True)
class DemoAnswer:
    username: str
    message: str
    sources: list[str]  # the titles of the sources the answer cites


def create_demo_users(users: UserStore) -> str | None:
    """Creates the demo users the store lacks, sharing one generated password (returned, to be
    shown once); None when every one exists already."""
    missing = [name for name in DEMO_USERS if users.get(name) is None]
    if not missing:
        return None
    password = secrets.token_urlsafe(12)
    for name in missing:
        users.create(name, password)
    return password


def ask_as(base: str, settings: Settings, users: UserStore, username: str, question: str = QUESTION) -> DemoAnswer:
    """``question`` sent to ``ai/rag`` with a token signed for ``username``, as the web UI sends it."""
    user = users.get(username)
    if user is None:
        raise LookupError(f"no local user {username}")
    token, _ = signed_token(user, settings)
    got = urllib3.request(
        "POST",
        f"{base}{settings.api_prefix}/ai/rag",
        json={"query": question},
        headers={"Authorization": f"Bearer {token}"},
        timeout=120,
        retries=False,
    )
    content = got.json().get("content", {})
    message = content.get("message") or content.get("error", {}).get("reason", "")
    cited = content.get("references", [])  # ai/rag's cited sources (docs/citations.md)
    return DemoAnswer(username, " ".join(str(message).split()), [s.get("title", "") for s in cited])
