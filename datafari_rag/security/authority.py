"""Which tokens a user holds: a ManifoldCF authority service, or the local mapping file.

ManifoldCF's ``GET {base}/UserACLs?username=<user>`` answers ASCII lines (its servlet writes
ISO-8859-1 with URL-encoded values): for each authority connection one status line —
``AUTHORIZED:``, ``UNAUTHORIZED:``, ``USERNOTFOUND:`` or ``UNREACHABLEAUTHORITY:`` + the
authority's name — then its ``TOKEN:<connection>:<token>`` lines, and ``ID:<user>`` when asked.
Tokens are taken as ManifoldCF's own Solr plugin takes them (the text after ``TOKEN:``).

Fail closed: a user is answered only from a well-formed reply in which every authority was
reached. Refused (503 ``authorityUnavailable``): no status line (an empty or garbage body), a line
of any other kind, an ``UNREACHABLEAUTHORITY`` line, any status but 200 (redirects are not
followed), bytes that are not ASCII, a reply over 1 MB, and a lookup that has not finished within
``security.authority.timeout`` seconds in all (a slow, dripping reply included). Good answers are
cached for ``security.authority.cacheTtl`` seconds.
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

STATUS_LINES = ("AUTHORIZED:", "UNAUTHORIZED:", "USERNOTFOUND:", "UNREACHABLEAUTHORITY:")
MAX_REPLY = 1 << 20
_cache: dict[tuple[str, str], tuple[float, frozenset[str]]] = {}
_lock = threading.Lock()
# asked directly (no proxy from the environment), never retried or redirected behind our back
_pool = urllib3.PoolManager(retries=False)


def _refused(reason: str) -> DatafariError:
    return DatafariError("authorityUnavailable", f"The authority service {reason}.")


def parse_user_acls(text: str) -> frozenset[str]:
    """The tokens of a UserACLs reply, or :class:`DatafariError` when it cannot be trusted."""
    tokens: set[str] = set()
    statuses = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("TOKEN:"):
            token = line[len("TOKEN:") :]
            if not token:
                raise _refused("answered an empty token")
            tokens.add(token)
        elif line.startswith("UNREACHABLEAUTHORITY:"):
            raise _refused(f"could not reach {line.split(':', 1)[1] or 'an authority'}")
        elif line.startswith(STATUS_LINES):
            statuses += 1
        elif not line.startswith("ID:"):
            raise _refused(f"answered a line ManifoldCF does not define: {line[:80]!r}")
    if statuses == 0:
        raise _refused("answered no authority status (an empty or unexpected reply)")
    return frozenset(tokens)


def _fetch(url: str, username: str, seconds: float) -> str:
    """The reply's text, read within ``seconds`` in all."""
    deadline = time.monotonic() + seconds
    try:
        response = _pool.request(
            "GET",
            url,
            fields={"username": username},
            timeout=urllib3.Timeout(connect=seconds, read=seconds),
            redirect=False,
            preload_content=False,
        )
        complete = False
        try:
            if response.status != 200:
                raise _refused(f"answered HTTP {response.status}")
            body = bytearray()
            while chunk := response.read1(65536):
                body += chunk
                if len(body) > MAX_REPLY:
                    raise _refused(f"answered more than {MAX_REPLY} bytes")
                if time.monotonic() > deadline:
                    raise _refused(f"did not finish answering within {seconds:g} s")
            complete = True
        finally:
            if not complete:
                response.close()  # a connection left mid-reply is not reused
            response.release_conn()
    except urllib3.exceptions.HTTPError as exc:
        raise _refused(f"cannot be reached ({type(exc).__name__})") from exc
    try:
        return body.decode("ascii")
    except UnicodeDecodeError as exc:
        raise _refused("answered bytes that are not ASCII") from exc


def _from_authority(username: str, settings: Settings) -> frozenset[str]:
    key = (settings.authority_url, username)
    now = time.monotonic()
    with _lock:
        hit = _cache.get(key)
    if hit and now - hit[0] < settings.authority_cache_ttl:
        return hit[1]
    text = _fetch(settings.authority_url.rstrip("/") + "/UserACLs", username, settings.authority_timeout)
    tokens = parse_user_acls(text)
    with _lock:
        _cache[key] = (now, tokens)
    return tokens


@lru_cache(maxsize=4)
def _mapping(path: Path, mtime: float) -> dict[str, dict[str, list[str]]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {"users": dict(data.get("users", {})), "groups": dict(data.get("groups", {}))}


def mapping_path(settings: Settings) -> Path:
    path = Path(settings.mapping_file)
    return path if path.is_absolute() else PROJECT_ROOT / path


def _from_mapping(username: str | None, groups: tuple[str, ...], settings: Settings) -> frozenset[str]:
    path = mapping_path(settings)
    try:
        mapping = _mapping(path, path.stat().st_mtime)
    except (OSError, ValueError) as exc:
        raise DatafariError("authorityUnavailable", f"The token mapping file cannot be read: {exc}") from exc
    tokens = set(mapping["users"].get(username, [])) if username else set()
    for group in groups:
        tokens.update(mapping["groups"].get(group, []))
    return frozenset(t for t in tokens if isinstance(t, str))


OWN_TOKEN = "datafari-rag-user:"  # + a username: the token only that user holds (in both layers)


def own_token(username: str) -> str:
    """The token of what is private to ``username`` (their uploads): every identity holds its own,
    here and in Solr's security filter alike."""
    return OWN_TOKEN + username


def tokens_for(username: str, groups: tuple[str, ...], settings: Settings) -> frozenset[str]:
    """The user's tokens: the authority's (plus its groups' from the mapping file, if there is
    one), else the mapping file's; with ``security.groups.asTokens``, the groups themselves; and
    the user's own token (:func:`own_token`)."""
    if settings.authority_url:
        tokens = set(_from_authority(username, settings))
        if groups and mapping_path(settings).exists():
            tokens |= _from_mapping(None, groups, settings)
    else:
        tokens = set(_from_mapping(username, groups, settings))
    if settings.groups_as_tokens:
        tokens.update(groups)
    tokens.add(own_token(username))
    return frozenset(tokens)
