"""Workflows and their API keys in the relational store (the conversations' database).

A workflow is saved whole, as one document (``WorkflowSpec.as_dict(secrets=True)``, its ranker's
API key sealed), in one transaction, so a refused save changes nothing; read back, the document
is validated by the same model. At most one workflow is the default: the one ``ai/rag`` runs.
An API key is random (256 bits), shown once at creation; only its SHA-256 is kept, and a revoked
key is kept as revoked (its hash can never be accepted again).
"""

from __future__ import annotations

import builtins
import hashlib
import hmac
import secrets
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select, update
from sqlalchemy.orm import Session, sessionmaker

from ..security.sealed import Sealer
from ..store import transaction
from ..store.schema import ApiKey, Workflow
from .spec import SECRET_OPTIONS, WorkflowError, WorkflowSpec

KEY_PREFIX = "dfr_"
MAX_KEYS = 50  # per workflow, revoked ones included


def _utc(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def key_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class StoredWorkflow:
    id: str
    spec: WorkflowSpec
    created_at: str
    updated_at: str

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, **self.spec.as_dict(), "created_at": self.created_at, "updated_at": self.updated_at}

    @property
    def version(self) -> tuple[str, str]:
        return self.id, self.updated_at


def _secrets(document: dict[str, Any], change: Callable[[str], str]) -> dict[str, Any]:
    """``document`` with its ranker's secrets sealed or opened by ``change``."""
    ranker = document.get("ranker")
    if not ranker:
        return document
    opened = {k: change(v) if k in SECRET_OPTIONS and isinstance(v, str) else v for k, v in ranker.items()}
    return {**document, "ranker": opened}


def _stored(row: Workflow, sealer: Sealer) -> StoredWorkflow:
    document = {**_secrets(row.document, sealer.open), "name": row.name, "default": row.is_default}
    spec = WorkflowSpec.model_validate(document)
    return StoredWorkflow(row.id, spec, _utc(row.created_at) or "", _utc(row.updated_at) or "")


def _fill(row: Workflow, spec: WorkflowSpec, sealer: Sealer) -> None:
    """The row as ``spec`` says: its name and whether it is the default are columns (what the
    store searches by, one default at a time), the rest is the document."""
    row.name, row.is_default = spec.name, spec.default
    document = spec.as_dict(secrets=True)
    del document["name"], document["default"]
    row.document = _secrets(document, sealer.seal)


class WorkflowStore:
    def __init__(self, engine: Engine, sealer: Sealer) -> None:
        self.sessions = sessionmaker(engine, expire_on_commit=False)
        self.sealer = sealer

    def seal_clear(self) -> int:
        """Seals the reranker keys saved before sealing existed; how many rankers had one."""
        with self._session() as session:
            rows = list(session.scalars(select(Workflow)))
            clear = [r for r in rows if _secrets(r.document, self.sealer.seal) != r.document]
            for row in clear:
                row.document = _secrets(row.document, self.sealer.seal)
        return len(clear)

    @contextmanager
    def _session(self) -> Iterator[Session]:
        taken = WorkflowError("workflowExists", "A workflow already has this name.")
        with transaction(self.sessions, "the workflow store", taken) as session:
            yield session

    def _row(self, session: Session, workflow_id: str, lock: bool = False) -> Workflow:
        query = select(Workflow).where(Workflow.id == workflow_id)
        row = session.scalars(query.with_for_update() if lock else query).first()
        if row is None:
            raise WorkflowError("workflowNotFound", "No such workflow.")
        return row

    def _taken(self, session: Session, name: str, other_than: str | None = None) -> None:
        query = select(Workflow.id).where(Workflow.name == name)
        if other_than:
            query = query.where(Workflow.id != other_than)
        if session.scalars(query).first() is not None:
            raise WorkflowError("workflowExists", "A workflow already has this name.")

    @staticmethod
    def _only_default(session: Session, spec: WorkflowSpec, workflow_id: str) -> None:
        if spec.default:  # one default: the others stop being it, in the same transaction
            session.execute(update(Workflow).where(Workflow.id != workflow_id).values(is_default=False))

    def create(self, spec: WorkflowSpec) -> StoredWorkflow:
        now = datetime.now(UTC)
        with self._session() as session:
            self._taken(session, spec.name)
            row = Workflow(id=str(uuid.uuid4()), created_at=now, updated_at=now)
            _fill(row, spec, self.sealer)
            self._only_default(session, spec, row.id)
            session.add(row)
            session.flush()
            return _stored(row, self.sealer)

    def replace(self, workflow_id: str, spec: WorkflowSpec) -> StoredWorkflow:
        with self._session() as session:
            row = self._row(session, workflow_id, lock=True)
            self._taken(session, spec.name, workflow_id)
            _fill(row, spec, self.sealer)
            self._only_default(session, spec, workflow_id)
            row.updated_at = datetime.now(UTC)
            session.flush()
            return _stored(row, self.sealer)

    def delete(self, workflow_id: str) -> None:
        with self._session() as session:
            session.delete(self._row(session, workflow_id, lock=True))

    def get(self, workflow_id: str) -> StoredWorkflow:
        with self._session() as session:
            return _stored(self._row(session, workflow_id), self.sealer)

    def list(self) -> list[StoredWorkflow]:
        with self._session() as session:
            return [_stored(r, self.sealer) for r in session.scalars(select(Workflow).order_by(Workflow.name))]

    def default_version(self) -> tuple[str, str] | None:
        """The default workflow's :attr:`StoredWorkflow.version`, read without its document (what
        workers compare every second)."""
        with self._session() as session:
            query = select(Workflow.id, Workflow.updated_at).where(Workflow.is_default.is_(True))
            found = session.execute(query).first()
            return (found[0], _utc(found[1]) or "") if found else None

    def default(self) -> StoredWorkflow | None:
        with self._session() as session:
            row = session.scalars(select(Workflow).where(Workflow.is_default.is_(True))).first()
            return _stored(row, self.sealer) if row else None

    # --- API keys -----------------------------------------------------------------------------

    def create_key(self, workflow_id: str, name: str, username: str) -> tuple[dict[str, Any], str]:
        """A new key of the workflow, acting as ``username``: its description and the key itself
        (returned here only)."""
        secret = KEY_PREFIX + secrets.token_urlsafe(32)
        with self._session() as session:
            self._row(session, workflow_id, lock=True)
            count = len(session.scalars(select(ApiKey.id).where(ApiKey.workflow_id == workflow_id)).all())
            if count >= MAX_KEYS:
                message = f"A workflow has at most {MAX_KEYS} keys, revoked ones included."
                raise WorkflowError("workflowBadRequest", message)
            row = ApiKey(
                id=str(uuid.uuid4()),
                workflow_id=workflow_id,
                name=name,
                prefix=secret[:12],
                key_hash=key_hash(secret),
                username=username,
                created_at=datetime.now(UTC),
            )
            session.add(row)
            session.flush()
            return _key(row), secret

    def keys(self, workflow_id: str) -> builtins.list[dict[str, Any]]:
        with self._session() as session:
            self._row(session, workflow_id)
            rows = session.scalars(select(ApiKey).where(ApiKey.workflow_id == workflow_id).order_by(ApiKey.created_at))
            return [_key(r) for r in rows]

    def revoke_key(self, workflow_id: str, key_id: str) -> dict[str, Any]:
        with self._session() as session:
            row = session.get(ApiKey, key_id, with_for_update=True)
            if row is None or row.workflow_id != workflow_id:
                raise WorkflowError("apiKeyNotFound", "No such key for this workflow.")
            if row.revoked_at is None:
                row.revoked_at = datetime.now(UTC)
            return _key(row)

    def key_user(self, workflow_id: str, secret: str) -> str | None:
        """The username a valid, unrevoked key of this workflow acts as; None for any other key."""
        if not secret.startswith(KEY_PREFIX) or len(secret) > 200:
            return None
        digest = key_hash(secret)
        with self._session() as session:
            row = session.scalars(select(ApiKey).where(ApiKey.key_hash == digest)).first()
            if row is None or not hmac.compare_digest(row.key_hash, digest):
                return None
            if row.workflow_id != workflow_id or row.revoked_at is not None:
                return None
            return row.username


def _key(row: ApiKey) -> dict[str, Any]:
    """A key as the API shows it: never the key nor its hash, only its first characters."""
    return {
        "id": row.id,
        "name": row.name,
        "prefix": row.prefix,
        "username": row.username,
        "created_at": _utc(row.created_at),
        "revoked_at": _utc(row.revoked_at),
    }
