"""Where the project's own files are: configsets, the Solr runtime, conf/, var/."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

PROJECT_ROOT = Path(os.environ.get("DATAFARI_RAG_ROOT", Path(__file__).resolve().parent.parent))
SOLR_CONFIG = PROJECT_ROOT / "solr_config"
CONFIGSETS = SOLR_CONFIG / "configsets"
MODELS = SOLR_CONFIG / "models"
SOLR_RUNTIME = SOLR_CONFIG / "runtime"
SOLR_PLUGIN = SOLR_CONFIG / "plugin"
CONF = PROJECT_ROOT / "conf"
SAMPLE_CORPUS = PROJECT_ROOT / "datafari_rag" / "indexing" / "sample_corpus.jsonl"


def var_dir() -> Path:
    """Runtime state (Solr home, logs, pid files); DATAFARI_RAG_VAR moves it."""
    return Path(os.environ.get("DATAFARI_RAG_VAR", PROJECT_ROOT / "var"))


def control_socket(configured: str, server: str, port: int) -> str | None:
    """A gunicorn master's control socket: the configured path, none (no socket), or one of its
    own under var/run (gunicorn's default path is shared by every master a user starts)."""
    if configured.lower() == "none":
        return None
    return configured or str(var_dir() / "run" / f"{server}-{port}.ctl")


def kept_secret(path: Path) -> tuple[str, bool]:
    """The random secret kept in ``path`` (owner-only, mode 0600), generated on first use; and
    whether this call generated it. Two processes at once keep one secret (O_EXCL)."""
    if path.is_file():
        return path.read_text().strip(), False
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    value = secrets.token_urlsafe(24)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip(), False
    with os.fdopen(fd, "w") as out:
        out.write(value + "\n")
    return value, True
