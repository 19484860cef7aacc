"""Prompt templates replaced from the store: the configuration's or a workflow's
(``prompt.templates``), then a conversation's own (chat-core's per-room prompts), before the
packaged file.

An override is jinja2 text for one of the answer prompts. Text without blocks replaces the
template's instructions (its ``system`` block); text with ``{% block system %}`` or
``{% block user %}`` replaces those blocks and keeps the others. Overrides are rendered in jinja2's
sandbox: they see the request's variables (the question, the user's own retrieved documents…) and
nothing of Python's. A conversation's are written by any signed-in user, and the sandbox does not
bound time or memory (loops over the documents' characters, ``"x" * 10**9``, ``center(10**9)``):
theirs are ``plain`` — text, ``{{ variable }}`` and the two blocks, nothing else — so what they
render is bounded by their own size and the variables'. Workflows' and the configuration's, written
by administrators, may use all of jinja2.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.sandbox import SandboxedEnvironment

# The prompts rendered with a request's context: the ones a workflow or a room may replace
OVERRIDABLE = (
    "refine_initial",
    "refine_refining",
    "map",
    "merge",
    "chat",
    "agent",
    "reflect_check",
    "reflect_correct",
    "tot_branch",
    "subqueries",
)
MAX_TEMPLATE_CHARS = 20000
_BLOCK = re.compile(r"{%-?\s*block\s+(\w+)")
# What a trial render gives every variable a template may use
TRIAL = {
    "query": "q",
    "snippets": "<document>d</document>",
    "previous_answer": "a",
    "format_instruction": "",
    "language_instruction": "",
    "reasoning_instruction": "",
    "history": "",
    "abstention": "none",
    "max_queries": 3,
    "unsupported": ["s"],
    "candidates": ["c"],
}


class TemplateError(ValueError):
    """An override that cannot be used; the message says which and why."""


@lru_cache(maxsize=1)
def _sandbox() -> SandboxedEnvironment:
    return SandboxedEnvironment(
        loader=jinja2.PackageLoader("datafari_rag", "prompts"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        auto_reload=False,
    )


@lru_cache(maxsize=256)
def compiled(name: str, text: str) -> jinja2.Template:
    """The override ``text`` of template ``name`` (TemplateError); the blocks it lacks are the
    packaged template's."""
    blocks = set(_BLOCK.findall(text))
    if blocks - {"system", "user"}:
        raise TemplateError(f"prompt '{name}': only the blocks system and user may be replaced")
    body = text if blocks else "{% block system %}" + text + "{% endblock %}"
    try:
        return _sandbox().from_string(body)
    except jinja2.TemplateError as exc:
        raise TemplateError(f"prompt '{name}': {exc}") from None


def template_of(name: str, overrides: Mapping[str, str]) -> jinja2.Template | None:
    return compiled(name, overrides[name]) if name in overrides else None


def parsed_templates(text: str, where: str) -> dict[str, str]:
    """``prompt.templates``: the JSON text of :func:`checked_templates`' object ("": none)."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise TemplateError(f"{where}: not JSON ({exc})") from None
    return checked_templates(value, where)


PLAIN_NODES = (nodes.Template, nodes.Block, nodes.Output, nodes.TemplateData, nodes.Name)


def _plain_only(name: str, text: str) -> None:
    """A ``plain`` override: text, ``{{ variable }}`` and the system/user blocks (TemplateError)."""
    try:
        tree = _sandbox().parse(text)
    except jinja2.TemplateError as exc:
        raise TemplateError(f"prompt '{name}': {exc}") from None
    other = sorted({type(n).__name__ for n in tree.find_all(nodes.Node) if not isinstance(n, PLAIN_NODES)})
    if other:
        raise TemplateError(
            f"prompt '{name}': a conversation's prompt holds text, {{{{ variables }}}} and blocks only "
            f"(not {', '.join(other)})"
        )


# the JSON schema of templates given by name (a workflow's, a conversation's)
PROMPTS_SCHEMA = {
    "type": "object",
    "propertyNames": {"enum": list(OVERRIDABLE)},
    "additionalProperties": {"type": "string", "minLength": 1, "maxLength": MAX_TEMPLATE_CHARS},
    "description": "prompt name: jinja2 text (without blocks: the instructions)",
}


def checked_templates(value: Any, where: str, plain: bool = False) -> dict[str, str]:
    """Overrides as a conversation (``plain``) or a workflow gives them: known prompt names, text of
    at most 20000 characters, each compiled and tried with every variable the prompt gets
    (TemplateError, naming ``where``)."""
    if not isinstance(value, dict):
        raise TemplateError(f"{where}: an object of prompt name to template text")
    unknown = sorted(set(value) - set(OVERRIDABLE))
    if unknown:
        raise TemplateError(f"{where}: unknown prompt(s) {', '.join(unknown)} (one of {', '.join(OVERRIDABLE)})")
    for name, text in value.items():
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEMPLATE_CHARS:
            raise TemplateError(f"{where}: prompt '{name}' is text of 1 to {MAX_TEMPLATE_CHARS} characters")
        try:
            if plain:
                _plain_only(name, text)
            template = compiled(name, text)
            for block in template.blocks.values():
                "".join(block(template.new_context(dict(TRIAL))))
        except TemplateError as exc:
            raise TemplateError(f"{where}: {exc}") from None
        except jinja2.TemplateError as exc:  # an unknown variable, a forbidden attribute
            raise TemplateError(f"{where}: prompt '{name}': {exc}") from None
    return dict(value)
