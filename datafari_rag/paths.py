"""Where the project's own files are: configsets, the Solr runtime, conf/, var/."""

from __future__ import annotations

import os
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
