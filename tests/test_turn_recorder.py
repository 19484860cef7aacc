"""Recording a turn from the pipeline's events: done, error, idle, and a store that fails."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from datafari_rag.conversations import ConversationStore
from datafari_rag.conversations.recorder import TurnRecorder
from datafari_rag.errors import DatafariError
from datafari_rag.rag.pipeline import Event
from datafari_rag.store.database import migrate, open_engine

SOURCES = {"items": [{"id": "d1", "title": "Leave", "url": "file://d1", "content": "secret text"}]}


def answer(fail: DatafariError | None = None) -> Iterator[Event]:
    yield Event("query.rewritten", {"query": "paid leave days"})
    yield Event("sources.final", SOURCES)
    yield Event("message.delta", {"text": "25 "})
    if fail:
        raise fail
    yield Event("message.delta", {"text": "days"})
    references = [{"number": 1, "id": "d1", "title": "Leave", "url": "file://d1"}]
    yield Event("message.final", {"text": "25 days", "usage": {"total_tokens": 12}, "references": references})


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ConversationStore]:
    engine = open_engine(f"sqlite:///{tmp_path / 'c.db'}")
    migrate(engine)
    store = ConversationStore(engine)
    yield store
    store.close()


def recorder(store: ConversationStore) -> TurnRecorder:
    return TurnRecorder(store, "alice", store.create("alice")["id"], "How many days?")


def blocks(store: ConversationStore, rec: TurnRecorder) -> list[dict]:
    return store.get("alice", rec.conversation_id)["blocks"]


def test_a_complete_answer_is_saved_before_it_is_given(store: ConversationStore) -> None:
    rec = recorder(store)
    seen = []
    for event in rec.wrap(answer()):
        if event.type == "message.final":  # already in the store when the client gets it
            assert [b["status"] for b in blocks(store, rec)] == ["done"]
        seen.append(event.type)
    assert seen[-1] == "message.final"
    [block] = blocks(store, rec)
    assert (block["answer"], block["rewritten_queries"], block["usage"]) == (
        "25 days",
        ["paid leave days"],
        {"total_tokens": 12},
    )
    assert block["sources"] == [{"id": "d1", "title": "Leave", "url": "file://d1", "number": 1, "cited": True}]


def test_a_failed_answer_is_saved_as_an_error(store: ConversationStore) -> None:
    rec = recorder(store)
    with pytest.raises(DatafariError):
        list(rec.wrap(answer(DatafariError("ragNoValidAnswer"))))
    [block] = blocks(store, rec)
    assert (block["status"], block["error_label"], block["answer"]) == ("error", "ragNoValidAnswer", "25 ")


def test_a_client_that_leaves_leaves_an_idle_turn(store: ConversationStore) -> None:
    rec = recorder(store)
    events = rec.wrap(answer())
    for event in events:
        if event.type == "message.delta":
            break
    events.close()
    [block] = blocks(store, rec)
    assert (block["status"], block["answer"]) == ("idle", "25 ")


def test_a_store_that_fails_turns_the_answer_into_a_technical_error(store: ConversationStore) -> None:
    rec = recorder(store)
    rec.store = ConversationStore(open_engine("postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=2"))
    given = []
    with pytest.raises(DatafariError) as failure:
        for event in rec.wrap(answer()):
            given.append(event.type)
    assert failure.value.label == "ragTechnicalError" and "message.final" not in given
