"""The sidecar's Solr account: its user name and password, generated once when none is configured.

A secured Solr (the default of ``solr start``, ``bootstrap``, ``run`` and compose) lets only this
account past its door unfiltered. Its password comes from ``solr.password``, else from
``solr.passwordFile`` (default ``var/secrets/solr-service.password``), which the commands that
secure Solr create with a random password, readable by its owner only. It is never printed.
"""

from __future__ import annotations

from pathlib import Path

from ..config import Settings
from ..paths import kept_secret, var_dir
from .user_properties import service_user


def password_file(settings: Settings) -> Path:
    """Where the generated password lives."""
    return (
        Path(settings.solr_password_file)
        if settings.solr_password_file
        else var_dir() / "secrets" / "solr-service.password"
    )


def credentials(settings: Settings) -> tuple[str, str] | None:
    """(user, password) for Solr's BasicAuth, or None when no password is configured nor generated
    (a development Solr without authentication)."""
    password = settings.solr_password
    if not password:
        path = password_file(settings)
        password = path.read_text().strip() if path.is_file() else ""
    return (service_user(settings), password) if password else None


def ensure(settings: Settings) -> tuple[str, str]:
    """(user, password), generating and keeping the password (mode 0600) when there is none."""
    found = credentials(settings)
    if found:
        return found
    return service_user(settings), kept_secret(password_file(settings))[0]
