"""Personal data in a question (chat-core's sensitive-information rules), found by well-kept
validators rather than loose patterns: e-mail addresses, phone numbers (Google's libphonenumber,
``phonenumbers``), IBANs, payment card numbers (Luhn) and national identity numbers (the French
NIR, the US SSN) checked by ``python-stdnum``, so that a number that only looks like one (an
order number, a date) is not taken for one."""

from __future__ import annotations

import re
from dataclasses import dataclass

import phonenumbers
from stdnum import iban, luhn
from stdnum.fr import nir
from stdnum.us import ssn

KINDS = ("email", "phone", "iban", "card", "national_id")
PHONE_REGIONS = ("FR", "US", "GB", "DE", "BE", "CH", "CA")  # national formats read; international always

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}", re.I)
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,30}\b")
_CARD = re.compile(r"\b\d(?:[ -]?\d){12,18}\b")
_NIR = re.compile(r"\b[12][ ]?\d{2}[ ]?\d{2}[ ]?(?:\d{2}|2[AB])[ ]?\d{3}[ ]?\d{3}[ ]?\d{2}\b")
_SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")


@dataclass(frozen=True)
class Found:
    kind: str
    start: int
    end: int


def _digits(text: str) -> str:
    return re.sub(r"[ -]", "", text)


def find_pii(text: str, kinds: frozenset[str] = frozenset(KINDS)) -> list[Found]:
    """Every piece of personal data of ``kinds`` in ``text``, in order, none overlapping."""
    found: list[Found] = []
    if "email" in kinds:
        found += [Found("email", m.start(), m.end()) for m in _EMAIL.finditer(text)]
    if "iban" in kinds:
        found += [Found("iban", m.start(), m.end()) for m in _IBAN.finditer(text) if iban.is_valid(m.group())]
    if "national_id" in kinds:
        found += [Found("national_id", m.start(), m.end()) for m in _NIR.finditer(text) if nir.is_valid(m.group())]
        found += [Found("national_id", m.start(), m.end()) for m in _SSN.finditer(text) if ssn.is_valid(m.group())]
    if "card" in kinds:
        found += [
            Found("card", m.start(), m.end())
            for m in _CARD.finditer(text)
            if 13 <= len(_digits(m.group())) <= 19 and luhn.is_valid(_digits(m.group()))
        ]
    if "phone" in kinds:
        for region in PHONE_REGIONS:
            found += [
                Found("phone", m.start, m.end)
                for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID)
            ]
    kept: list[Found] = []
    for item in sorted(found, key=lambda f: (f.start, -(f.end - f.start))):
        if not kept or item.start >= kept[-1].end:  # the first and longest of overlapping finds
            kept.append(item)
    return kept


def masked(text: str, found: list[Found]) -> str:
    """``text`` with each find replaced by its kind (``[EMAIL]``): what an audit line may keep."""
    out, at = [], 0
    for item in found:
        out += [text[at : item.start], f"[{item.kind.upper()}]"]
        at = item.end
    return "".join([*out, text[at:]])
