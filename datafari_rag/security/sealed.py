"""Secrets at rest: what the relational store keeps of a secret (an LLM token an administrator
set at run time, a workflow's reranker API key) is sealed with a key the database never holds.

Fernet (``cryptography``: AES-128-CBC with an HMAC-SHA256, so a changed value is refused, not
read as garbage). The key is ``security.secretsKey`` — several keys, comma-separated, rotate:
the first seals, any of them opens — else one generated once in ``security.secretsKeyFile``
(default ``var/secrets/store.key``, mode 0600). A sealed value reads ``sealed:v1:<token>``; a
value written before sealing existed is read as it is, and sealed the first time the process opens its store.
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from ..config import ConfigError, Settings
from ..paths import var_dir

PREFIX = "sealed:v1:"


class SealedSecretError(ConfigError):
    """A sealed value none of the configured keys opens."""


def key_file(settings: Settings) -> Path:
    return Path(settings.secrets_key_file) if settings.secrets_key_file else var_dir() / "secrets" / "store.key"


def _keys(settings: Settings) -> list[str]:
    configured = [k.strip() for k in settings.secrets_key.split(",") if k.strip()]
    if configured:
        return configured
    path = key_file(settings)
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:  # O_EXCL: two workers starting at once must not each write a different key
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(Fernet.generate_key().decode() + "\n")
        except FileExistsError:
            pass
    return [path.read_text().strip()]


class Sealer:
    def __init__(self, keys: list[str]) -> None:
        try:
            self.fernet = MultiFernet([Fernet(k.encode()) for k in keys])
        except ValueError:
            raise ConfigError("security.secretsKey: each key is 32 url-safe base64-encoded bytes (Fernet)") from None

    @classmethod
    def of(cls, settings: Settings) -> Sealer:
        return cls(_keys(settings))

    def seal(self, text: str) -> str:
        """The value to store; "" (no secret) stays "", a value already sealed stays as it is."""
        if not text or text.startswith(PREFIX):
            return text
        return PREFIX + self.fernet.encrypt(text.encode()).decode()

    def open(self, stored: str) -> str:
        """The secret of a stored value (one stored before sealing existed is read as it is)."""
        if not stored.startswith(PREFIX):
            return stored
        try:
            return self.fernet.decrypt(stored[len(PREFIX) :].encode()).decode()
        except InvalidToken:
            raise SealedSecretError(
                "A stored secret was sealed with another key: set security.secretsKey to the key it was sealed with."
            ) from None
