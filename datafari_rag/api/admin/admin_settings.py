"""The "RAG & AI configuration" of administrators: every ``rag.properties`` key, and the ones that
apply at run time changed without a restart.

- ``GET …/admin/settings``: each key with its section, help, default, current value, whether an
  administrator changed it, whether it may change at run time; a secret (a token, a password, a
  key) is shown as set or not, never as itself.
- ``PUT …/admin/settings`` ``{"values": {key: value or null}}``: null puts the file's value
  back. Every value is checked, then the configuration they make together (it must load and
  build), then all are saved in one transaction; a refused save changes nothing.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from ...config import KEYS, ConfigError, Settings, secret_key
from ...errors import DatafariError
from ...live import live_key, with_overrides
from ...prompts.overrides import TemplateError, parsed_templates
from ...retrieval.rerank import build_reranker
from ..http.answers import SettingsAnswer
from ..http.context import get_services, live
from ..http.contract import endpoint, json, refusals
from ..http.errors import ok_content
from ..http.shapes import SettingsChange, read
from ..http.store_calls import store_call
from .users import require_admin

bp = Blueprint("admin_settings", __name__)
WHAT = "The RAG & AI configuration"
MAX_VALUE = 20000
# the secret each endpoint receives with every call
SECRET_OF_ENDPOINT = {"ai.api.endpoint": "ai.api.token", "rerank.api.url": "rerank.api.key"}


def _text(value: Any) -> str:
    """A JSON value as the properties file would hold it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _listing(settings: Settings, overrides: dict[str, str]) -> list[dict[str, Any]]:
    rows = []
    for key, f in KEYS.items():
        value = getattr(settings, f.name)
        secret = secret_key(key)
        meta = f.metadata
        rows.append(
            {
                "key": key,
                "section": meta["section"],
                "help": meta["help"],
                "type": f.type if isinstance(f.type, str) else f.type.__name__,
                "choices": list(meta["choices"]),
                "minimum": meta["minimum"],
                "maximum": meta["maximum"],
                "default": "" if secret else _text(f.default),
                "value": ("" if secret else _text(value)),
                "set": bool(value) if secret else None,
                "secret": secret,
                "overridden": key in overrides,
                "live": live_key(key),
                "receivesSecret": SECRET_OF_ENDPOINT.get(key),  # changes only with that secret
            }
        )
    return rows


def _answer() -> tuple[Response, int]:
    services = get_services()
    overrides = store_call(services.store.overrides().values)
    return ok_content({"settings": _listing(services.settings, overrides)}), 200


THE_SETTINGS = json(SettingsAnswer, "the settings")


@bp.get("/admin/settings")
@endpoint(
    "Every rag.properties key and its value now; secrets never shown (administrators)",
    {200: THE_SETTINGS, **refusals(401, 403, 503)},
)
def read_settings() -> tuple[Response, int]:
    require_admin(WHAT)
    return _answer()


def _check_secret_follows_endpoint(changes: dict[str, str | None], base: Settings, current: Settings) -> None:
    """A changed endpoint needs its secret in the same change (a value, "" for none; or null when
    the endpoint goes back to the file's too), which replaces the old one: else pointing the
    endpoint at one's own server would receive the hidden secret."""
    for url_key, secret in SECRET_OF_ENDPOINT.items():
        if url_key not in changes:
            continue
        field = KEYS[url_key].name
        after = changes[url_key] if changes[url_key] is not None else _text(getattr(base, field))
        if after == _text(getattr(current, field)):
            continue
        if changes.get(secret) is None and not (changes[url_key] is None and secret in changes):
            raise DatafariError(
                "settingsBadRequest",
                f"{url_key}: changing it sends {secret} to the new address; give {secret} in the same "
                'change ("" for none), which replaces the old one.',
            )


@bp.put("/admin/settings")
@endpoint(
    "Change run-time keys, checked whole, applied without restart (administrators)",
    {200: THE_SETTINGS, **refusals(400, 401, 403, 413, 415, 503)},
    SettingsChange,
)
def save_settings() -> tuple[Response, int]:
    admin = require_admin(WHAT)
    body = read(SettingsChange, "settingsBadRequest")
    changes: dict[str, str | None] = {}
    for key, value in body.values.items():
        if key not in KEYS:
            raise DatafariError("settingsBadRequest", f"{key}: names no setting.")
        if not live_key(key):
            raise DatafariError("settingsBadRequest", f"{key}: read at start only; set it in rag.properties.")
        text = None if value is None else _text(value)
        if text is not None and len(text) > MAX_VALUE:
            raise DatafariError("settingsBadRequest", f"{key}: at most {MAX_VALUE} characters.")
        changes[key] = text
    services = get_services()
    store = store_call(services.store.overrides)
    stored = store_call(store.values)
    runtime = live()
    _check_secret_follows_endpoint(changes, runtime.base, with_overrides(runtime.base, stored))
    merged = {**stored, **changes}
    kept = {k: v for k, v in merged.items() if v is not None}
    try:
        settings = with_overrides(runtime.base, kept)
        build_reranker(settings, services.llm)  # what could not be built would be refused at each start
        parsed_templates(settings.prompt_templates, "prompt.templates")
    except (ConfigError, TemplateError) as exc:
        raise DatafariError("settingsBadRequest", str(exc)) from None
    store_call(store.save, changes, admin)
    runtime.changed()
    return _answer()
