"""Answer prompts replaced from the store: what an override may be and how it renders."""

from __future__ import annotations

import re

import pytest
from jinja2 import meta

from datafari_rag.prompts import PromptContext, environment
from datafari_rag.prompts.overrides import OVERRIDABLE, TRIAL, TemplateError, checked_templates, parsed_templates


def test_text_without_blocks_replaces_the_instructions_and_keeps_the_packaged_user_block() -> None:
    templates = checked_templates({"refine_initial": "Answer like a pirate. {{ abstention }}"}, "x")
    prompt = PromptContext("what?", templates=templates).prompt("refine_initial", snippets="<document>d</document>")
    packaged = PromptContext("what?").prompt("refine_initial", snippets="<document>d</document>")
    assert prompt.system == "Answer like a pirate. I could not find the answer in the documents."
    assert prompt.user == packaged.user and packaged.system.startswith("Task: answer")


def test_a_user_block_replaces_the_user_message_only() -> None:
    templates = checked_templates({"chat": "{% block user %}Q: {{ query }}{% endblock %}"}, "x")
    prompt = PromptContext("hi", templates=templates).prompt("chat")
    assert prompt.user == "Q: hi" and prompt.system == PromptContext("hi").prompt("chat").system


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ({"nope": "x"}, "unknown prompt(s) nope"),
        ({"chat": "{{ foo }}"}, "'foo' is undefined"),
        ({"chat": "{{ query.__class__.__mro__ }}"}, "unsafe"),
        ({"chat": "{{ abstention.__init__.__globals__ }}"}, "unsafe"),
        ({"chat": "{% block evil %}{% endblock %}"}, "only the blocks system and user"),
        ({"chat": "{% if %}"}, "prompt 'chat'"),
        ({"chat": ""}, "text of 1 to 20000"),
        ({"chat": "x" * 20001}, "text of 1 to 20000"),
        ({"chat": 3}, "text of 1 to 20000"),
        (["chat"], "an object"),
        ("{}", "an object"),
    ],
)
def test_an_override_that_cannot_be_used_is_refused_with_its_reason(value: object, says: str) -> None:
    with pytest.raises(TemplateError, match=r"^where: ") as refused:
        checked_templates(value, "where")
    assert says in str(refused.value)


def test_the_configuration_key_is_json_text() -> None:
    assert parsed_templates("", "prompt.templates") == {}
    assert parsed_templates('{"map": "Be short. {{ abstention }}"}', "prompt.templates") == {
        "map": "Be short. {{ abstention }}"
    }
    with pytest.raises(TemplateError, match=r"prompt\.templates: not JSON"):
        parsed_templates("{map", "prompt.templates")


def test_an_override_may_use_every_variable_its_packaged_prompt_uses() -> None:
    """The trial render gives every variable the packaged prompts use: an override written from
    the packaged file is never refused for a variable the prompt does get."""
    for name in OVERRIDABLE:
        packaged = environment().get_template(f"{name}.j2")
        source = environment().loader.get_source(environment(), f"{name}.j2")[0]  # type: ignore[union-attr]
        used = meta.find_undeclared_variables(environment().parse(source))
        assert used <= set(TRIAL), (name, used - set(TRIAL))
        for block in packaged.blocks.values():
            assert "".join(block(packaged.new_context(dict(TRIAL))))
        assert checked_templates({name: source}, name) == {name: source}


@pytest.mark.parametrize(
    "text",
    [
        "{% for a in snippets %}{% for b in snippets %}x{% endfor %}{% endfor %}",  # CPU: length squared
        '{{ "x" * 1000000000 }}',  # memory
        "{{ query|center(1000000000) }}",
        "{{ range(100000)|list }}",
        "{% set s = query %}{{ s }}",
        "{% if query %}x{% endif %}",
        "{{ query.upper() }}",
    ],
)
def test_a_conversations_prompt_is_plain_text_variables_and_blocks(text: str) -> None:
    """Any signed-in user writes a conversation's prompts, and the sandbox bounds neither time nor
    memory: theirs may hold nothing that computes; an administrator's workflow prompt may."""
    with pytest.raises(TemplateError, match=re.escape("text, {{ variables }} and blocks only")):
        checked_templates({"chat": text}, "where", plain=True)
    plain = {"chat": "{% block user %}Asked: {{ query }}{% endblock %}Be brief. {{ language_instruction }}"}
    assert checked_templates(plain, "where", plain=True) == plain
    assert checked_templates({"chat": "{% if query %}Q: {{ query|upper }}{% endif %}"}, "where")
