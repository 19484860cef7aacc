"""Renders the jinja2 templates of ``datafari_rag/prompts/`` with the request's query, format, language, history."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import jinja2
import pycountry

# The sentence the LLM must answer with when the documents do not hold the answer, in the answer's
# language (a chat UI shows it as it is); other languages get the English one.
ABSTENTIONS = {
    "en": "I could not find the answer in the documents.",
    "fr": "Je n'ai pas trouvé la réponse dans les documents.",
}

FORMAT_INSTRUCTIONS = {
    "bulletpoint": "Write the answer as a bullet-point list.\n",
    "text": "Write the answer as plain prose.\n",
    "stepbystep": "Write the answer as numbered step-by-step instructions.\n",
}
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


@dataclass(frozen=True)
class PromptContext:
    """What every prompt of one request shares."""

    query: str
    format: str | None = None
    lang: str | None = None
    history: list[dict[str, str]] = field(default_factory=list)

    @property
    def format_instruction(self) -> str:
        return FORMAT_INSTRUCTIONS.get(self.format or "", "")

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

    def prompt(self, template: str, snippets: str = "", previous_answer: str = "") -> str:
        return render(
            template,
            query=self.query,
            snippets=snippets,
            previous_answer=previous_answer,
            format_instruction=self.format_instruction,
            language_instruction=self.language_instruction,
            history=self.history_block(),
            abstention=self.abstention,
        )


def snippet_text(title: str, content: str) -> str:
    return render("snippet", title=title, content=content).strip()


def partial_answer_text(content: str) -> str:
    return render("partial_answer", content=content).strip()
