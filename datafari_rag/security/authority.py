"""Which tokens a user holds: a ManifoldCF authority service, or the local mapping file.

ManifoldCF's ``GET {base}/UserACLs?username=<user>`` answers lines; ``TOKEN:<token>`` lines
are the user's tokens, other lines are ignored. Answers are cached for
``security.authority.cacheTtl`` seconds. If the service cannot be asked or answers badly, the
request is refused (fail closed): nothing is retrieved with a guessed set of tokens.
"""

from __future__ import annotations

import json
import threading
import time
from functools import lru_cache
from pathlib import Path

import urllib3

from ..config import Settings
from ..errors import DatafariError
from ..paths import PROJECT_ROOT

_cache: dict[tuple[str, str], tuple[float, frozenset[str]]] = {}
_lock = threading.Lock()
# asked directly (no proxy from the environment), never retried or redirected behind our back
_pool = urllib3.PoolManager(retries=False)


def _from_authority(username: str, settings: Settings) -> frozenset[str]:
    key = (settings.authority_url, username)
    now = time.monotonic()
    with _lock:
        hit = _cache.get(key)
    if hit and now - hit[0] < settings.authority_cache_ttl:
        return hit[1]
    url = settings.authority_url.rstrip("/") + "/UserACLs"
    try:
        response = _pool.request(
            "GET", url, fields={"username": username}, timeout=settings.authority_timeout, redirect=False
        )
    except urllib3.exceptions.HTTPError as exc:
        raise DatafariError("authorityUnavailable", f"The authority service cannot be reached: {exc}") from exc
    if response.status != 200:
        raise DatafariError("authorityUnavailable", f"The authority service answered HTTP {response.status}.")
    try:
        text = response.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatafariError(
            "authorityUnavailable", "The authority service answered with bytes that are not UTF-8."
        ) from exc
    tokens = frozenset(line[len("TOKEN:") :] for line in text.splitlines() if line.startswith("TOKEN:"))
    with _lock:
        _cache[key] = (now, tokens)
    return tokens


@lru_cache(maxsize=4)
def _mapping(path: Path, mtime: float) -> dict[str, dict[str, list[str]]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {"users": dict(data.get("users", {})), "groups": dict(data.get("groups", {}))}


def _mapping_path(settings: Settings) -> Path:
    path = Path(settings.mapping_file)
    return path if path.is_absolute() else PROJECT_ROOT / path


def _from_mapping(username: str | None, groups: tuple[str, ...], settings: Settings) -> frozenset[str]:
    path = _mapping_path(settings)
    try:
        mapping = _mapping(path, path.stat().st_mtime)
    except (OSError, ValueError) as exc:
        raise DatafariError("authorityUnavailable", f"The token mapping file cannot be read: {exc}") from exc
    tokens = set(mapping["users"].get(username, [])) if username else set()
    for group in groups:
        tokens.update(mapping["groups"].get(group, []))
    return frozenset(t for t in tokens if isinstance(t, str))


def tokens_for(username: str, groups: tuple[str, ...], settings: Settings) -> frozenset[str]:
    """The user's tokens: the authority's (plus its groups' from the mapping file, if there is
    one), else the mapping file's; with ``security.groups.asTokens``, the groups themselves."""
    if settings.authority_url:
        tokens = set(_from_authority(username, settings))
        if groups and _mapping_path(settings).exists():
            tokens |= _from_mapping(None, groups, settings)
    else:
        tokens = set(_from_mapping(username, groups, settings))
    if settings.groups_as_tokens:
        tokens.update(groups)
    return frozenset(tokens)
