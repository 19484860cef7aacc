"""FAQ direct answers on the real Solr with the real embedding model: a question close to a
curated entry's is answered by it before any retrieval or LLM call (chat-core's FAQ), from the
entries the user may read only — random users, and the control with both ACL layers off leaks."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.acl_harness import EVERY_TOKEN, POOL, layers_off, random_acl, reference_allows
from datafari_rag.testing.fake_llm import FakeLlm
from tests.integration.conftest import mapped_users

API = "/Datafari/rest/v2.0"
ENTRIES = [
    ("How do I reset my VPN password?", "Open the self-service portal and choose 'Reset VPN password'."),
    ("Where do I declare my overtime hours?", "Overtime is declared in the HR tool before the 5th of the month."),
    ("Who approves my travel expenses?", "Your manager approves travel expenses, then finance pays them."),
    ("How do I book a meeting room?", "Meeting rooms are booked in the calendar, under 'Rooms'."),
    ("What is the wifi password for guests?", "Guests connect to 'Visitors' with the code printed at reception."),
    ("How many days of remote work are allowed?", "Two days of remote work a week, agreed with your manager."),
    ("Where is the first aid kit?", "The first aid kit hangs next to the lifts on every floor."),
    ("How do I order a new laptop?", "Laptops are ordered through the IT catalogue, approved by your manager."),
    ("When are salaries paid?", "Salaries are paid on the last working day of the month."),
    ("How do I get a parking permit?", "Parking permits are issued by the facilities desk on the ground floor."),
    ("Who do I call if the printer jams?", "Call the service desk on extension 4000 for a jammed printer."),
    ("How do I change my bank details for payroll?", "Bank details are changed in the payroll portal, section 'Me'."),
    ("Can I bring my dog to the office?", "Dogs are welcome on Fridays, in the open space of the second floor."),
    ("How do I report a phishing email?", "Forward a phishing email to the security team with the 'Report' button."),
    ("Where can I find the holiday calendar?", "The holiday calendar is on the intranet home page."),
    ("How do I join the company choir?", "The choir meets on Tuesdays at noon in room B12; just come along."),
    ("What should I do if I lose my badge?", "Reception blocks a lost badge and prints another."),
    ("How do I claim my gym subsidy?", "The gym subsidy is claimed once a year with the receipt, in the HR tool."),
    ("How do I set up two-factor authentication?", "Install the authenticator app and scan the code shown at sign-in."),
    ("Where do I send invoices from suppliers?", "Supplier invoices go to the accounts payable mailbox."),
]
PUBLIC = (0, 2)  # entries everybody may read; the others get random ACLs


class World:
    def __init__(self, rng: random.Random) -> None:
        self.users = {f"user{i}": frozenset(rng.sample(POOL, rng.randint(0, 4))) for i in range(8)}
        self.entries = {
            f"faq-{i}": {
                "id": f"faq-{i}",
                "title": question,
                "url": f"file://faq/{i}",
                "type_category": "faq",
                "exactContent": answer,
                **(random_acl(rng) if i not in PUBLIC else {}),
            }
            for i, (question, answer) in enumerate(ENTRIES)
        }

    def readable(self, user: str) -> set[str]:
        return {i for i, d in self.entries.items() if reference_allows(self.users[user], d)}


@pytest.fixture(scope="module")
def world(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, World]:
    w = World(random.Random(7))
    users = {u: sorted(t) for u, t in w.users.items()} | {EVERY_TOKEN: sorted(POOL), "admin": sorted(POOL)}
    mine = mapped_users(settings, tmp_path_factory.mktemp("faq"), "faq", users).replace(
        retrieval_method="bm25",
        faq_enabled=True,
    )
    bootstrap(solr, mine)
    docs = [*w.entries.values()]
    docs.append({"id": "doc-1", "title": "Parking", "url": "file://doc/1", "exactContent": "The car park opens at 7."})
    assert all(r.status == "ok" for r in Indexer.of(solr, mine).add(docs, commit=True))
    return mine, w


@pytest.fixture
def client(world: tuple[Settings, World], fake_llm_server: tuple[FakeLlm, str], fake_llm: FakeLlm) -> FlaskClient:
    return create_app(world[0].replace(llm_endpoint=fake_llm_server[1])).test_client()


def ask(client: FlaskClient, user: str, query: str) -> dict[str, Any]:
    return client.post(f"{API}/ai/rag", json={"query": query}, headers={"X-Remote-User": user}).get_json()


def test_a_close_question_is_answered_by_its_entry_without_the_llm(client: FlaskClient, fake_llm: FakeLlm) -> None:
    out = ask(client, "admin", "How can I reset the password of my VPN?")
    assert out["status"] == "OK", out
    content = out["content"]
    assert content["message"] == ENTRIES[0][1]
    assert [d["id"] for d in content["documents"]] == ["faq-0"] and [r["number"] for r in content["references"]] == [1]
    assert fake_llm.prompts() == []  # no rewriting, no retrieval prompt, no answer call
    headers = {"Accept": "text/event-stream", "X-Remote-User": "admin"}
    text = client.post(f"{API}/ai/stream", json={"query": "Who approves travel expenses?"}, headers=headers)
    events = [json.loads(b[6:]) for b in text.get_data(as_text=True).split("\n\n") if b.startswith("data: ")]
    assert any(e["type"] == "step" and e["id"] == "faq" for e in events)
    assert events[-1]["final_response"] == ENTRIES[2][1]


def test_another_question_goes_the_usual_way(client: FlaskClient, fake_llm: FakeLlm) -> None:
    out = ask(client, "admin", "When does the car park open?")
    assert out["status"] == "OK" and out["content"]["message"] == "A fake answer."
    assert len(fake_llm.prompts()) == 1


def faq_leaks(client: FlaskClient, w: World) -> list[str]:
    """Every user asks every entry's question: an answer from an entry they may not read."""
    found = []
    for user in w.users:
        for question, answer in ENTRIES:
            out = ask(client, user, question)
            ids = {d["id"] for d in out["content"].get("documents", [])}
            found += [f"{user}:{i}" for i in ids & set(w.entries) - w.readable(user)]
            if answer in json.dumps(out) and not any(w.entries[i]["exactContent"] == answer for i in w.readable(user)):
                found.append(f"{user}:{question}")
    return found


def test_random_users_get_answers_from_their_entries_only(client: FlaskClient, world: tuple[Settings, World]) -> None:
    w = world[1]
    assert faq_leaks(client, w) == []
    user = max(w.users, key=lambda u: len(w.readable(u)))
    mine = sorted(w.readable(user))[0]
    question = w.entries[mine]["title"]
    assert ask(client, user, question)["content"]["message"] == w.entries[mine]["exactContent"]


def test_the_control_with_both_layers_off_finds_the_leaks(
    client: FlaskClient, world: tuple[Settings, World], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("datafari_rag.solr.search.acl_params", layers_off("both"))
    assert len(faq_leaks(client, world[1])) >= 3
