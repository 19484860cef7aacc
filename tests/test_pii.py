"""Personal data in a question: each kind found by its validator, lookalikes left alone, masked."""

from __future__ import annotations

import pytest

from datafari_rag.rag.pii import find_pii, masked

# a valid French NIR and SSN, IBAN and card numbers (published test values)
FOUND = [
    ("Write to jeanne.martin@example.fr about it", "email"),
    ("Appelez le 06 12 34 56 78 demain", "phone"),
    ("Call +1 415 555 2671 tomorrow", "phone"),
    ("Pay to FR76 3000 6000 0112 3456 7890 189 please", "iban"),
    ("My card is 4111 1111 1111 1111", "card"),
    ("Mon numéro de sécu est 2 94 03 75 120 005 91", "national_id"),
    ("SSN 536-90-4399 on file", "national_id"),
]


@pytest.mark.parametrize(("text", "kind"), FOUND)
def test_each_kind_is_found_and_masked(text: str, kind: str) -> None:
    found = find_pii(text)
    assert [f.kind for f in found] == [kind], found
    assert f"[{kind.upper()}]" in masked(text, found) and text[found[0].start : found[0].end] not in masked(text, found)


@pytest.mark.parametrize(
    "text",
    [
        "How many days of paid annual leave in 2024?",
        "Order 4111 1111 1111 1112 was shipped",  # fails Luhn
        "Invoice FR76 3000 6000 0112 3456 7890 180",  # bad IBAN check digits
        "The meeting is on 12/03/2025 at 10:30",
        "Procedure 536-90-43991 step 2",
    ],
)
def test_lookalikes_are_not_personal_data(text: str) -> None:
    assert find_pii(text) == []


def test_only_the_kinds_asked_for_are_looked_for() -> None:
    text = "jeanne@example.fr, 06 12 34 56 78"
    assert [f.kind for f in find_pii(text, frozenset({"phone"}))] == ["phone"]
    assert masked(text, find_pii(text)) == "[EMAIL], [PHONE]"
