"""Reading the configuration: ``conf/rag.properties``, then ``DATAFARI_RAG_*`` environment
variables, each value converted and checked with the key that holds it; older Datafari names read
with a warning, retired ones refused unless they ask for what the product does.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import javaproperties

from ..paths import CONF
from .keys import ENV_PREFIX, MAX_INSTRUCTIONS, SELF_QUERY_FIELDS, ConfigError
from .settings import Settings

log = logging.getLogger(__name__)

# Variables that are not keys: they say where the files are, or serve the test suite and benchmarks.
ENVIRONMENT = {
    "DATAFARI_RAG_CONFIG": "the properties file to read (default: conf/rag.properties)",
    "DATAFARI_RAG_ROOT": "the folder holding conf/ and solr_config/ (default: the source checkout)",
    "DATAFARI_RAG_VAR": "runtime state: Solr home, logs, pid files, control sockets (default: var/)",
    "DATAFARI_RAG_TEST_PREFIX": "tests: prefix of the test collections (default: test_)",
    "DATAFARI_RAG_BENCH_RESULTS": "benchmarks: file where `python -m bench` collects the figures",
}


def _convert(f: dataclasses.Field[Any], raw: str, kind: type) -> Any:
    key, choices, minimum = f.metadata["key"], f.metadata["choices"], f.metadata["minimum"]
    raw = raw.strip()
    if choices:
        if raw not in choices:
            shown = ", ".join(c or "(empty)" for c in choices)
            raise ConfigError(f"{key}: {raw!r} is not one of {shown}")
        return raw
    try:
        if kind is bool:
            if raw.lower() not in ("true", "false"):
                raise ValueError("expected true or false")
            return raw.lower() == "true"
        value = kind(raw)
    except ValueError as exc:
        raise ConfigError(f"{key}: {raw!r} is not a valid {kind.__name__} ({exc})") from None
    if kind in (int, float) and value < minimum:
        raise ConfigError(f"{key}: {raw!r} must be at least {minimum:g}")
    maximum = f.metadata["maximum"]
    if kind in (int, float) and maximum is not None and value > maximum:
        raise ConfigError(f"{key}: {raw!r} must be at most {maximum:g}")
    return value


SECRET_ENDINGS = (".token", ".password", ".secret", ".key")


def secret_key(key: str) -> bool:
    """Whether ``key`` holds a secret: never shown back, kept sealed in the relational store."""
    return key.endswith(SECRET_ENDINGS)


def env_name(key: str) -> str:
    """The environment variable that overrides ``key``: ``solr.url`` → ``DATAFARI_RAG_SOLR_URL``."""
    return ENV_PREFIX + key.upper().replace(".", "_")


KEYS = {f.metadata["key"]: f for f in dataclasses.fields(Settings)}
_ENV_KEYS = {env_name(key): key for key in KEYS}
_reported: set[str] = set()


# Older Datafari names (6.1's rag.* keys, 6.2's single rewriting switch) still read, each into the
# key(s) that replaced it, with a deprecation warning naming both. A current key that is set wins.
DEPRECATED: dict[str, tuple[str, ...]] = {
    "rag.api.endpoint": ("ai.api.endpoint",),
    "rag.api.token": ("ai.api.token",),
    "rag.model": ("llm.model",),
    "rag.temperature": ("llm.temperature",),
    "rag.maxTokens": ("llm.maxTokens",),
    "rag.maxToken": ("llm.maxTokens",),
    "rag.maxFiles": ("chunking.maxFiles",),
    "rag.maxJsonLength": ("prompt.max.request.size",),
    "rag.chunk.size": ("chunking.chunk.size",),
    "rag.enabled": ("ai.enable.rag",),
    "chat.query.rewriting.enabled": ("chat.query.rewriting.enabled.bm25", "chat.query.rewriting.enabled.vector"),
    # the store's own name since it holds more than conversations (docs/conversations.md)
    "conversations.url": ("store.url",),
}
_ENV_DEPRECATED = {env_name(old): old for old in DEPRECATED}

# Keys that no longer name a setting, with the one value that meant what the product now always
# does (accepted with a warning) and why any other value stops the start.
RETIRED: dict[str, tuple[str, str]] = {
    "vector.embedding.mode": (
        "processor",
        "FileShare's update processor is the only chunk writer (the sidecar's writer modes were retired, "
        "see docs/indexing.md): remove the key",
    ),
}
_ENV_RETIRED = {env_name(old): old for old in RETIRED}


def unknown_names(props: dict[str, str], env: Mapping[str, str]) -> list[str]:
    """What names no setting: keys of the properties file, ``DATAFARI_RAG_*`` variables, each with
    the setting it was most likely meant to be when one is close (a typo)."""
    names = KEYS.keys() | DEPRECATED.keys() | RETIRED.keys()
    found = [f"key '{k}' of the properties file{_closest(k, names, DEPRECATED)}" for k in props if k not in names]
    known = set(_ENV_KEYS) | set(_ENV_DEPRECATED) | set(_ENV_RETIRED) | set(ENVIRONMENT)
    renamed = {env_name(old): tuple(env_name(n) for n in new) for old, new in DEPRECATED.items()}
    found += [
        f"environment variable {name}{_closest(name, known, renamed)}"
        for name in env
        if name.startswith(ENV_PREFIX) and name not in known
    ]
    return found


def _closest(name: str, names: Iterable[str], renamed: Mapping[str, tuple[str, ...]]) -> str:
    """ " (did you mean X?)" for the nearest of ``names`` (an older name: the one that replaced it)."""
    near = difflib.get_close_matches(name, list(names), n=1, cutoff=0.85)
    return f" (did you mean {' or '.join(renamed.get(near[0], near[:1]))}?)" if near else ""


def _warn_once(message: str, *args: object) -> None:
    text = message % args
    if text not in _reported:
        _reported.add(text)
        log.warning(text)


def _deprecated_values(props: dict[str, str], env: Mapping[str, str]) -> dict[str, str]:
    """The values older names give to current keys that are not set themselves."""
    given = {old: env.get(env_name(old), props.get(old)) for old in DEPRECATED}
    out: dict[str, str] = {}
    for old, raw in given.items():
        if raw is None:
            continue
        for new in DEPRECATED[old]:
            if env.get(env_name(new), props.get(new)) is not None:
                _warn_once("Deprecated: %s is ignored, %s is set (%s replaced %s).", old, new, new, old)
            elif new not in out:
                out[new] = raw
                _warn_once("Deprecated: %s is read as %s; rename it.", old, new)
    return out


def _check_retired(props: dict[str, str], env: Mapping[str, str]) -> None:
    """A retired key set to what the product now always does is a warning; to anything else, a
    ConfigError: the deployment expects a behaviour that no longer exists."""
    for key, (kept, why) in RETIRED.items():
        raw = env.get(env_name(key), props.get(key))
        if raw is None:
            continue
        if raw.strip() != kept:
            raise ConfigError(f"{key}={raw.strip()} is retired: {why}.")
        _warn_once("Retired: %s=%s is what the product always does; %s.", key, kept, why)


_TYPES = {"str": str, "int": int, "float": float, "bool": bool}


def convert(key: str, raw: str) -> Any:
    """One key's value from its text, with the same checks as the properties file (ConfigError)."""
    if key not in KEYS:
        near = _closest(key, KEYS.keys() | DEPRECATED.keys(), DEPRECATED)
        raise ConfigError(f"{key}: names no setting{near} (see docs/configuration.md)")
    f = KEYS[key]
    return _convert(f, raw, _TYPES[f.type] if isinstance(f.type, str) else f.type)


def load_settings(path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Reads the properties file (if present) and the environment (``env``: os.environ by default);
    validates every key, and reports (once per process, as a warning naming it) every key or
    variable that names no setting."""
    variables: Mapping[str, str] = os.environ if env is None else env
    path = path or Path(variables.get(ENV_PREFIX + "CONFIG", CONF / "rag.properties"))
    props: dict[str, str] = {}
    if path.exists():
        with path.open(encoding="utf-8") as fh:
            props = javaproperties.load(fh)
    for name in unknown_names(props, variables):
        _warn_once("Ignored: %s, which names no setting (see docs/configuration.md).", name)
    older = _deprecated_values(props, variables)
    _check_retired(props, variables)
    values: dict[str, Any] = {}
    for key, f in KEYS.items():
        raw = variables.get(env_name(key), props.get(key, older.get(key)))
        if raw is None:
            continue
        values[f.name] = convert(key, raw)
    settings = Settings(**values)
    return checked(settings)


def checked(settings: Settings) -> Settings:
    """The checks that span a value's text: a URL, lists of names, a JSON filter (ConfigError)."""
    urls = [u.strip() for u in settings.solr_url.split(",")]
    if not all(u.startswith(("http://", "https://")) for u in urls):
        raise ConfigError(f"solr.url: {settings.solr_url!r} must be an http(s) URL, or several separated by commas")
    if len(settings.prompt_instructions) > MAX_INSTRUCTIONS:
        raise ConfigError(f"prompt.instructions: at most {MAX_INSTRUCTIONS} characters")
    for origin in settings.origins:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
            raise ConfigError(f"server.allowedOrigins: {origin!r} is not an origin (scheme://host[:port])")
    if settings.login_url and not settings.login_url.startswith(("http://", "https://", "/")):
        raise ConfigError(f"security.loginUrl: {settings.login_url!r} must be an http(s) URL or a path")
    settings.base_filter  # noqa: B018 - parsed here so that a bad one stops the start
    if settings.vector_chunker != "recursive" and settings.vector_chunk_unit != "characters":
        raise ConfigError(f"vector.chunker={settings.vector_chunker} needs vector.chunksize.unit=characters")
    wrong = [f for f in settings.self_query_fields if f not in SELF_QUERY_FIELDS]
    if wrong:
        raise ConfigError(f"query.selfQuery.fields: {', '.join(wrong)} not among {', '.join(SELF_QUERY_FIELDS)}")
    return settings
