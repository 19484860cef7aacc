"""The local generator's support: the share of a question's own words a sentence holds, in English
and in French (accents folded, stop words and endings aside) — what ties a cited sentence to the
question."""

from __future__ import annotations

import pytest

from datafari_rag.agent.extractive import content_words, support


def test_the_words_that_carry_meaning_are_kept_folded() -> None:
    assert content_words("Combien de jours de congés payés par an ?") == ["jours", "conges", "payes"]
    assert content_words("When were the Normans in Normandy?") == ["normans", "normandy"]
    assert content_words("Où est-ce ?") == []


@pytest.mark.parametrize(
    ("question", "sentence", "expected"),
    [
        # congés/congé meet on their first five letters; payés/payé (four letters) do not
        ("Combien de jours de congés payés ?", "Chaque salarié a droit à 25 jours de congé payé.", 2 / 3),
        ("Combien de jours de congés payés ?", "La photosynthèse produit de l'oxygène.", 0.0),
        ("When were the Normans in Normandy?", "The Normans gave their name to Normandy.", 1.0),
        ("Who painted the Mona Lisa?", "The printer is on the second floor.", 0.0),
        ("Quelle est la hauteur de la tour Eiffel ?", "La tour de bureaux ouvre à 8 heures.", 1 / 3),
        ("Où est-ce ?", "Anything at all.", 1.0),  # nothing to look for: the cosine alone decides
    ],
)
def test_support_is_the_share_of_the_question_words_held(question: str, sentence: str, expected: float) -> None:
    assert support(content_words(question), sentence) == pytest.approx(expected)
