"""Settings from ``conf/rag.properties``, overridden by ``DATAFARI_RAG_*`` environment variables.

Keys keep Datafari's names where Datafari has them. Every value is validated when the
settings are loaded, and a bad one is reported with the key that holds it.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import javaproperties

from .paths import CONF

ENV_PREFIX = "DATAFARI_RAG_"


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the key."""


def _key(name: str, **kw: Any) -> Any:
    return field(metadata={"key": name}, **kw)


@dataclass(frozen=True)
class Settings:
    solr_url: str = _key("solr.url", default="http://127.0.0.1:8983/solr")
    collection_main: str = _key("solr.collection.main", default="FileShare")
    collection_vector: str = _key("solr.collection.vector", default="VectorMain")
    solr_username: str = _key("solr.username", default="")
    solr_password: str = _key("solr.password", default="")
    solr_timeout: float = _key("solr.timeout", default=30.0)
    embeddings_model: str = _key("solr.embeddings.model", default="default_model")
    vector_field: str = _key("solr.vector.field", default="vector_384")
    embeddings_endpoint: str = _key("solr.embeddings.endpoint", default="")
    agent_host: str = _key("agent.host", default="127.0.0.1")
    agent_port: int = _key("agent.port", default=8889)
    server_host: str = _key("server.host", default="127.0.0.1")
    server_port: int = _key("server.port", default=8080)
    api_prefix: str = _key("server.api.prefix", default="/Datafari/rest/v2.0")

    @property
    def agent_url(self) -> str:
        """The OpenAI-compatible base URL (…/v1) that Solr's model calls."""
        return self.embeddings_endpoint or f"http://{self.agent_host}:{self.agent_port}/v1"

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


def _convert(key: str, raw: str, kind: type) -> Any:
    raw = raw.strip()
    try:
        if kind is bool:
            if raw.lower() not in ("true", "false"):
                raise ValueError("expected true or false")
            return raw.lower() == "true"
        value = kind(raw)
    except ValueError as exc:
        raise ConfigError(f"{key}: {raw!r} is not a valid {kind.__name__} ({exc})") from None
    if kind in (int, float) and value < 0:
        raise ConfigError(f"{key}: {raw!r} must not be negative")
    return value


def load_settings(path: Path | None = None, env: dict[str, str] | None = None) -> Settings:
    """Reads the properties file (if present) and the environment; validates every key."""
    env = os.environ if env is None else env
    path = path or Path(env.get(ENV_PREFIX + "CONFIG", CONF / "rag.properties"))
    props: dict[str, str] = {}
    if path.exists():
        with path.open(encoding="utf-8") as fh:
            props = javaproperties.load(fh)
    types = {"str": str, "int": int, "float": float, "bool": bool}
    values: dict[str, Any] = {}
    for f in dataclasses.fields(Settings):
        key = f.metadata["key"]
        env_name = ENV_PREFIX + key.upper().replace(".", "_")
        raw = env.get(env_name, props.get(key))
        if raw is None:
            continue
        values[f.name] = _convert(key, raw, types[f.type] if isinstance(f.type, str) else f.type)
    settings = Settings(**values)
    if not settings.solr_url.startswith(("http://", "https://")):
        raise ConfigError(f"solr.url: {settings.solr_url!r} must be an http(s) URL")
    return settings
