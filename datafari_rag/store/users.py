"""Local users: accounts kept in the relational store for the UI when no external identity
provider is configured. Passwords are hashed with argon2id (argon2-cffi); a hash is never sent
back. A local user is a username like any other: what they may read comes from the same token
sources (mapping file, ManifoldCF authority) as every identity."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from .schema import AppUser
from .transaction import transaction

USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$")
MAX_PASSWORD = 1024
_HASHER = PasswordHasher()
_DUMMY = _HASHER.hash("a password nobody has")  # an unknown user costs a verification too


class UserError(ValueError):
    """A user request that cannot be done (bad name, weak password, exists, not found)."""

    def __init__(self, label: str, message: str) -> None:
        super().__init__(message)
        self.label = label


def _utc(moment: datetime) -> str:
    """ISO 8601 in UTC (SQLite gives the stored time back without its zone)."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


@dataclass(frozen=True)
class User:
    username: str
    admin: bool
    created_at: str
    updated_at: str
    # what a token signed for this account carries: it changes with the password and the role, so
    # a token signed before either change (or for a deleted account) is no longer accepted
    version: str = ""

    @classmethod
    def of(cls, row: AppUser) -> User:
        version = hashlib.sha256(f"{row.password_hash}|{row.admin}".encode()).hexdigest()[:16]
        return cls(row.username, row.admin, _utc(row.created_at), _utc(row.updated_at), version)

    def as_dict(self) -> dict[str, object]:
        return {
            "username": self.username,
            "admin": self.admin,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


def check_username(username: object) -> str:
    if not isinstance(username, str) or not USERNAME.match(username):
        raise UserError(
            "userBadRequest",
            "A username is 1 to 100 letters, digits, '.', '_', '@' or '-', starting with a letter or digit.",
        )
    return username


def check_password(password: object, minimum: int) -> str:
    if not isinstance(password, str) or not minimum <= len(password) <= MAX_PASSWORD:
        raise UserError("userBadRequest", f"A password is {minimum} to {MAX_PASSWORD} characters.")
    return password


class UserStore:
    def __init__(self, engine: Engine, min_password: int = 12) -> None:
        self.sessions = sessionmaker(engine, expire_on_commit=False)
        self.min_password = min_password

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with transaction(
            self.sessions, "the user store", UserError("userExists", "This username is taken.")
        ) as session:
            yield session

    def create(self, username: object, password: object, admin: bool = False) -> User:
        name = check_username(username)
        secret = check_password(password, self.min_password)
        now = datetime.now(UTC)
        with self._session() as session:
            if session.get(AppUser, name) is not None:
                raise UserError("userExists", "This username is taken.")
            row = AppUser(
                username=name, password_hash=_HASHER.hash(secret), admin=admin, created_at=now, updated_at=now
            )
            session.add(row)
            session.flush()
            return User.of(row)

    def update(self, username: str, password: object = None, admin: object = None) -> User:
        if password is None and admin is None:
            raise UserError("userBadRequest", "Nothing to change: give 'password' or 'admin'.")
        if admin is not None and not isinstance(admin, bool):
            raise UserError("userBadRequest", "'admin' is true or false.")
        secret = None if password is None else check_password(password, self.min_password)
        with self._session() as session:
            row = session.get(AppUser, username, with_for_update=True)
            if row is None:
                raise UserError("userNotFound", "No such user.")
            if admin is False and row.admin and self._admins(session) == 1:
                raise UserError("userBadRequest", "The last administrator cannot lose the role.")
            if secret is not None:
                row.password_hash = _HASHER.hash(secret)
            if admin is not None:
                row.admin = admin
            row.updated_at = datetime.now(UTC)
            return User.of(row)

    def delete(self, username: str) -> None:
        with self._session() as session:
            row = session.get(AppUser, username, with_for_update=True)
            if row is None:
                raise UserError("userNotFound", "No such user.")
            if row.admin and self._admins(session) == 1:
                raise UserError("userBadRequest", "The last administrator cannot be deleted.")
            session.delete(row)

    def list(self) -> list[User]:
        with self._session() as session:
            return [User.of(r) for r in session.scalars(select(AppUser).order_by(AppUser.username))]

    def get(self, username: str) -> User | None:
        with self._session() as session:
            row = session.get(AppUser, username)
            return User.of(row) if row else None

    def verify(self, username: object, password: object) -> User | None:
        """The user if the password is theirs; None otherwise (the same work either way)."""
        name = username if isinstance(username, str) else ""
        secret = password if isinstance(password, str) and len(password) <= MAX_PASSWORD else ""
        with self._session() as session:
            row = session.get(AppUser, name) if USERNAME.match(name) else None
            stored = row.password_hash if row else _DUMMY
            try:
                _HASHER.verify(stored, secret)
            except (VerificationError, InvalidHashError):
                return None
            return User.of(row) if row else None

    @staticmethod
    def _admins(session: Session) -> int:
        return session.scalar(select(func.count()).select_from(AppUser).where(AppUser.admin.is_(True))) or 0
