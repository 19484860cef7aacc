"""What the OAuth authorization server of ``/mcp`` keeps between requests, in the relational store
so that every worker and every sidecar sharing the database sees the same: the clients that
registered (RFC 7591), and the grants it handed out — authorization codes and refresh tokens.

A grant is kept by the SHA-256 of its value only (a copy of the database gives no usable code or
token) and is taken at most once: two workers exchanging the same code race for one delete, and
only the winner gets a token. A client's secret is sealed like every secret the store keeps.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, delete, func, select
from sqlalchemy.orm import sessionmaker

from ..security.sealed import Sealer
from .schema import OAuthClient, OAuthGrant
from .transaction import transaction

WHAT = "the OAuth authorization server's store"
SECRET = "client_secret"


class TooManyClients(RuntimeError):
    """Registration refused: the store holds as many clients as ``mcp.oauth.maxClients``."""


@dataclass(frozen=True)
class Grant:
    client_id: str
    username: str
    details: dict[str, Any]
    expires_at: float  # seconds since the epoch


def digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # SQLite drops the zone


class OAuthStore:
    def __init__(self, engine: Engine, sealer: Sealer, max_clients: int) -> None:
        self.sessions = sessionmaker(engine, expire_on_commit=False)
        self.sealer = sealer
        self.max_clients = max_clients

    def register(self, client_id: str, registration: dict[str, Any]) -> None:
        """Keeps a client's registration (its secret sealed); refused past ``max_clients``."""
        kept = dict(registration)
        if kept.get(SECRET):
            kept[SECRET] = self.sealer.seal(kept[SECRET])
        with transaction(self.sessions, WHAT) as session:
            if (session.scalar(select(func.count()).select_from(OAuthClient)) or 0) >= self.max_clients:
                raise TooManyClients(f"{self.max_clients} clients are registered already (mcp.oauth.maxClients).")
            session.add(OAuthClient(client_id=client_id, registration=json.dumps(kept), created_at=datetime.now(UTC)))

    def client(self, client_id: str) -> dict[str, Any] | None:
        """A client's registration as it was sent, with its secret, or None."""
        with transaction(self.sessions, WHAT) as session:
            row = session.get(OAuthClient, client_id[:64])
            if row is None:
                return None
            registration: dict[str, Any] = json.loads(row.registration)
        if registration.get(SECRET):
            registration[SECRET] = self.sealer.open(registration[SECRET])
        return registration

    def grant(self, kind: str, value: str, grant: Grant) -> None:
        """Keeps a code or a refresh token until ``grant.expires_at``; expired grants are dropped."""
        now = datetime.now(UTC)
        with transaction(self.sessions, WHAT) as session:
            session.execute(delete(OAuthGrant).where(OAuthGrant.expires_at < now))
            session.add(
                OAuthGrant(
                    digest=digest(value),
                    kind=kind,
                    client_id=grant.client_id,
                    username=grant.username,
                    details=json.dumps(grant.details),
                    expires_at=datetime.fromtimestamp(grant.expires_at, UTC),
                )
            )

    def find(self, kind: str, value: str, client_id: str) -> Grant | None:
        """The unexpired grant of this kind and value made to this client, or None."""
        with transaction(self.sessions, WHAT) as session:
            row = session.get(OAuthGrant, digest(value))
            if row is None or row.kind != kind or row.client_id != client_id:
                return None
            if _utc(row.expires_at) <= datetime.now(UTC):
                return None
            return Grant(row.client_id, row.username, json.loads(row.details), _utc(row.expires_at).timestamp())

    def take(self, kind: str, value: str) -> bool:
        """Removes a grant; True only for the one call that removed it (single use)."""
        with transaction(self.sessions, WHAT) as session:
            mine = (OAuthGrant.digest == digest(value), OAuthGrant.kind == kind)
            taken = session.execute(delete(OAuthGrant).where(*mine))
            return bool(getattr(taken, "rowcount", 0))
