"""``conf/rag.properties`` and ``docs/configuration.md``, generated from :class:`Settings`.

Both files are written by ``datafari-rag config write`` and checked by a test, so the shipped
configuration and its documentation can never drift from the code that reads them.
"""

from __future__ import annotations

import dataclasses
import textwrap
from itertools import groupby
from pathlib import Path
from typing import Any

from .config import DEPRECATED, ENVIRONMENT, Settings, env_name
from .paths import CONF, PROJECT_ROOT

PROPERTIES = CONF / "rag.properties"
MARKDOWN = PROJECT_ROOT / "docs" / "configuration.md"


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _sections() -> list[tuple[str, list[dataclasses.Field[Any]]]]:
    fields = dataclasses.fields(Settings)
    return [(title, list(group)) for title, group in groupby(fields, key=lambda f: f.metadata["section"])]


def render_properties() -> str:
    lines = [
        "# datafari-rag configuration, generated from datafari_rag/config/ (datafari-rag config write):",
        "# edit the values, not the comments. Every key can be overridden by an environment variable,",
        "# DATAFARI_RAG_ + the key upper-cased with dots as underscores (solr.url -> DATAFARI_RAG_SOLR_URL).",
        "# docs/configuration.md has the same keys in a table.",
    ]
    for title, fields in _sections():
        lines += ["", f"## {title}"]
        for f in fields:
            meta = f.metadata
            text = meta["help"] + (
                f" One of: {', '.join(c or '(empty)' for c in meta['choices'])}." if meta["choices"] else ""
            )
            lines += textwrap.wrap(text, width=98, initial_indent="# ", subsequent_indent="# ")
            lines.append(f"{meta['key']}={_value(f.default).replace(chr(92), chr(92) * 2)}")  # a backslash escapes
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown() -> str:
    out = [
        "# Configuration",
        "",
        "<!-- Generated from datafari_rag/config/ by `datafari-rag config write`; a test fails when it differs. -->",
        "",
        "`conf/rag.properties` holds every key below with its default (Datafari's key names where Datafari",
        "has them). Each key can be overridden by an environment variable: `DATAFARI_RAG_` + the key",
        "upper-cased with dots as underscores. Values are validated at start and a bad one is reported",
        "with its key; a key of the file, or a `DATAFARI_RAG_*` variable, that names no setting is",
        "reported at start with its name and the closest setting when a typo is likely (and ignored).",
    ]
    for title, fields in _sections():
        out += ["", f"## {title}", "", "| key | default | meaning |", "|-----|---------|---------|"]
        for f in fields:
            meta = f.metadata
            default = _value(f.default)
            choices = (
                f" One of: {', '.join(f'`{c}`' if c else '(empty)' for c in meta['choices'])}."
                if meta["choices"]
                else ""
            )
            out.append(
                f"| `{meta['key']}` | {f'`{default}`' if default else '(empty)'} | {_cell(meta['help'])}{choices} |"
            )
    out += [
        "",
        "## Older Datafari names",
        "",
        "Read into the key(s) that replaced them, with a deprecation warning naming both; a current key",
        "that is set wins (and the warning says the old one is ignored).",
        "",
        "| older name | read as |",
        "|------------|---------|",
        *(f"| `{old}` | {', '.join(f'`{n}`' for n in new)} |" for old, new in DEPRECATED.items()),
        "",
        "## Environment variables that are not keys",
        "",
        "| variable | meaning |",
        "|----------|---------|",
        *(f"| `{name}` | {_cell(text)} |" for name, text in ENVIRONMENT.items()),
        "",
        f"Example: `{env_name('solr.url')}=http://solr:8983/solr datafari-rag serve`.",
    ]
    return "\n".join(out) + "\n"


def write(properties: Path = PROPERTIES, markdown: Path = MARKDOWN) -> list[Path]:
    """Writes both files; returns the ones that changed."""
    changed = []
    for path, text in ((properties, render_properties()), (markdown, render_markdown())):
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed
