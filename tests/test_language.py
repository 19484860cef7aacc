"""Language detection for documents sent without one (py3langid's packaged model)."""

from __future__ import annotations

import pytest

from datafari_rag.text.language import detect, detect_question, with_language

FRENCH = "Chaque salarié a droit à vingt-cinq jours de congés payés par an, à poser avant la fin mars."
ENGLISH = "Every employee is entitled to twenty-five days of paid annual leave per calendar year."


def test_french_and_english_are_told_apart() -> None:
    assert detect(FRENCH) == "fr" and detect(ENGLISH) == "en"


@pytest.mark.parametrize("text", ["12345", "ok", "Le VPN", "  \n ", "https://x.y/z 42"])
def test_too_little_text_gets_no_language(text: str) -> None:
    assert detect(text) is None


def test_a_language_sent_with_the_document_is_kept() -> None:
    assert with_language({"id": "a", "language": "de"}, FRENCH)["language"] == "de"
    assert with_language({"id": "a"}, FRENCH)["language"] == "fr"
    assert "language" not in with_language({"id": "a"}, "12345")


def test_short_questions_are_told_among_the_index_languages() -> None:
    """Over every language a short French question often is not told French (22 % of PIAF's);
    among the index's languages it is, and an English one stays English."""
    for question in ("Qui a peint la Joconde ?", "Quand est né Victor Hugo ?", "Combien de congés ?"):
        assert detect_question(question) == "fr", question
    for question in ("Who painted the Mona Lisa?", "When was Victor Hugo born?", "How many days off?"):
        assert detect_question(question) == "en", question
    assert detect_question("42 ?") is None and detect("Qui a peint la Joconde ?") is None  # too short before
