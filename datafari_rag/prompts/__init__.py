"""The prompts: the jinja2 templates beside this file, rendered into chat messages.

As Datafari 6.2 sends them: the instructions (a template's ``system`` block) in a ``system``
message, the conversation so far as real ``user``/``assistant`` turns, then the documents and the
question (its ``user`` block) in the last ``user`` message. Rewriting prompts are the exception:
the conversation is what they rewrite, so it is a transcript inside their user message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import jinja2
import pycountry

from ..llm import ChatMessage
from ..llm.service import QUESTION_INTRO
from .overrides import template_of

# The sentence the LLM must answer with when the documents do not hold the answer, in the answer's
# language (a chat UI shows it as it is); other languages get the English one.
ABSTENTIONS = {
    "en": "I could not find the answer in the documents.",
    "fr": "Je n'ai pas trouvé la réponse dans les documents.",
}

# The format instruction, in the answer's language when it has them (English otherwise).
FORMAT_INSTRUCTIONS = {
    "en": {
        "bulletpoint": "Write the answer as a bullet-point list.",
        "text": "Write the answer as plain prose.",
        "stepbystep": "Write the answer as numbered step-by-step instructions.",
    },
    "fr": {
        "bulletpoint": "Rédige la réponse sous forme de liste à puces.",
        "text": "Rédige la réponse en texte suivi, sans liste.",
        "stepbystep": "Rédige la réponse sous forme d'étapes numérotées.",
    },
}
FORMATS = tuple(FORMAT_INSTRUCTIONS["en"])  # Datafari's "default" adds no instruction
TRANSCRIPT_TEMPLATES = frozenset({"rewrite_bm25", "rewrite_vector", "subqueries"})  # the conversation is their material
# prompt.layout=message-per-document (Datafari 6.1): the answer templates' documents, one user
# message each, then the question in a message of its own
PER_DOCUMENT_TEMPLATES = frozenset({"map", "refine_initial"})
DOCUMENT_INTRO = "Here is one of the documents: "
_DOCUMENT = re.compile(r"<document[ >].*?</document>(?=\s*<document[ >]|\s*$)", re.S)
_NAMES = {  # how the prompts name the most asked-for languages
    "en": "English",
    "fr": "French",
    "it": "Italian",
    "pt": "Portuguese",
    "de": "German",
    "es": "Spanish",
    "ru": "Russian",
    "nl": "Dutch",
    "pl": "Polish",
    "sv": "Swedish",
    "da": "Danish",
    "fi": "Finnish",
    "no": "Norwegian",
    "cs": "Czech",
    "ro": "Romanian",
    "el": "Greek",
    "tr": "Turkish",
    "ar": "Arabic",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "uk": "Ukrainian",
    "hu": "Hungarian",
}


def _iso_639_1() -> dict[str, str]:
    """Every ISO 639-1 language (pycountry's data), named as the prompts name it."""
    names = {
        lang.alpha_2: lang.name.split(" (")[0].split(";")[0] for lang in pycountry.languages if hasattr(lang, "alpha_2")
    }
    return {**names, **_NAMES}


LANGUAGES = _iso_639_1()  # any ISO 639-1 code may be asked for; the prompt names the language


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The templates of ``datafari_rag/prompts/``, package data: they travel with the package."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("datafari_rag", "prompts"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,  # prompts are text; inputs are cleaned by rag.hygiene instead
        # templates are read once per process: no stat() of the file on every render (14 per request)
        auto_reload=False,
    )


def render(name: str, **variables: object) -> str:
    return environment().get_template(f"{name}.j2").render(**variables).strip() + "\n"


def render_blocks(name: str, overrides: Mapping[str, str] | None = None, **variables: object) -> tuple[str, str]:
    """The ``system`` and ``user`` blocks of a template (or of its override, see overrides.py),
    rendered with the same variables."""
    packaged = environment().get_template(f"{name}.j2")
    override = template_of(name, overrides or {})
    rendered = []
    for block in ("system", "user"):
        template = override if override is not None and block in override.blocks else packaged
        rendered.append("".join(template.blocks[block](template.new_context(dict(variables)))).strip())
    return rendered[0], rendered[1]


def chat_turn(message: dict[str, str]) -> ChatMessage:
    """A history message as a chat turn. Only the product writes system instructions: a client's
    ``system`` message is sent as a ``user`` turn."""
    return {"role": "assistant" if message["role"] == "assistant" else "user", "content": message["content"]}


@dataclass(frozen=True)
class Prompt:
    """One LLM call: instructions, the conversation so far, then the documents and the question."""

    system: str
    user: str
    history: tuple[ChatMessage, ...] = ()
    parts: tuple[str, ...] = ()  # message-per-document: the user messages that replace ``user``

    def messages(self) -> list[ChatMessage]:
        users: list[ChatMessage] = [{"role": "user", "content": text} for text in self.parts or (self.user,)]
        return [{"role": "system", "content": self.system}, *self.history, *users]

    @property
    def text(self) -> str:
        """Every message's text, in order (what a size limit counts, what a log shows)."""
        return "\n".join(m["content"] for m in self.messages())

    def __len__(self) -> int:
        return len(self.text)


@dataclass(frozen=True)
class PromptContext:
    """What every prompt of one request shares."""

    query: str
    format: str | None = None
    lang: str | None = None
    history: list[dict[str, str]] = field(default_factory=list)
    reasoning: bool = False  # rag.strategy=cot: the steps first, then the answer
    instructions: str = ""  # prompt.instructions: an administrator's or a workflow's, after the product's
    layout: str = "one-message"  # prompt.layout
    templates: Mapping[str, str] = field(default_factory=dict)  # overrides: prompt.templates, then the room's

    @property
    def reasoning_instruction(self) -> str:
        return render("cot_instruction").strip() + "\n" if self.reasoning else ""

    @property
    def format_instruction(self) -> str:
        known = FORMAT_INSTRUCTIONS.get(self.lang or "en", FORMAT_INSTRUCTIONS["en"])
        return known[self.format] + "\n" if self.format in known else ""

    @property
    def language_instruction(self) -> str:
        if self.lang:
            return f"Write the answer in {LANGUAGES[self.lang]}.\n"
        return "Write the answer in the language of the question.\n"

    @property
    def abstention(self) -> str:
        return ABSTENTIONS.get(self.lang or "en", ABSTENTIONS["en"])

    def history_block(self) -> str:
        lines = "".join(render("history_line", role=m["role"], content=m["content"]) for m in self.history)
        return render("history_block", lines=lines.strip()) if lines else ""

    def prompt(self, template: str, snippets: str = "", previous_answer: str = "", **extra: object) -> Prompt:
        transcript = template in TRANSCRIPT_TEMPLATES
        system, user = render_blocks(
            template,
            self.templates,
            query=self.query,
            snippets=snippets,
            previous_answer=previous_answer,
            format_instruction=self.format_instruction,
            language_instruction=self.language_instruction,
            reasoning_instruction=self.reasoning_instruction,
            history=self.history_block() if transcript else "",
            abstention=self.abstention,
            **extra,
        )
        turns = () if transcript else tuple(chat_turn(m) for m in self.history)
        if self.instructions and not transcript:
            system = f"{system}\n{self.instructions.strip()}"
        parts: tuple[str, ...] = ()
        if self.layout == "message-per-document" and template in PER_DOCUMENT_TEMPLATES:
            documents = _DOCUMENT.findall(snippets)
            parts = (*(DOCUMENT_INTRO + d for d in documents), QUESTION_INTRO + self.query)
        return Prompt(system, user, turns, parts)


def snippet_text(title: str, content: str, number: int | None = None) -> str:
    """A document block; ``number`` is what the answer cites it by ([1], [2] …)."""
    return render("snippet", title=title, content=content, number=number).strip()


def partial_answer_text(content: str) -> str:
    return render("partial_answer", content=content).strip()
