"""The conversation store on both databases it supports: SQLite and a real PostgreSQL server."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import func, select

from datafari_rag.config import Settings
from datafari_rag.conversations import (
    ConversationLimit,
    ConversationNotFound,
    ConversationStore,
    Turn,
)
from datafari_rag.store import StoreHandle, StoreUnavailable
from datafari_rag.store.database import is_current, migrate, open_engine
from datafari_rag.store.schema import Base, Block


@pytest.fixture
def store(database_url: str) -> Iterator[ConversationStore]:
    engine = open_engine(database_url)
    migrate(engine)
    store = ConversationStore(engine, max_per_user=5, max_turns=6)
    yield store
    store.close()


def done(question: str, answer: str = "", **extra: object) -> Turn:
    return Turn(question, answer or f"answer to {question}", "done", **extra)  # type: ignore[arg-type]


def test_the_migrations_build_exactly_the_models_and_run_once(database_url: str) -> None:
    engine = open_engine(database_url)
    migrate(engine)
    migrate(engine)  # a second start has nothing to do
    assert is_current(engine)
    with engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []
    engine.dispose()


def test_create_list_read_rename_delete(store: ConversationStore) -> None:
    first = store.create("alice", "Leave questions")
    second = store.create("alice")
    assert second["title"].startswith("Conversation of ")
    store.append("alice", first["id"], done("How many days of leave?", sources=[{"id": "d1", "title": "Leave"}]))
    assert [c["id"] for c in store.list("alice")] == [first["id"], second["id"]]  # the last used first
    read = store.get("alice", first["id"])
    [block] = read["blocks"]
    assert block["question"] == "How many days of leave?" and block["status"] == "done"
    assert block["sources"] == [{"id": "d1", "title": "Leave"}] and block["position"] == 0
    assert store.rename("alice", first["id"], "Renamed")["title"] == "Renamed"
    store.delete("alice", first["id"])
    assert [c["id"] for c in store.list("alice")] == [second["id"]]
    with store.sessions() as session:  # the conversation's blocks went with it
        assert session.scalar(select(func.count()).select_from(Block)) == 0


def test_another_users_conversation_is_found_exactly_like_a_missing_one(store: ConversationStore) -> None:
    mine = store.create("alice")["id"]
    for cid in (mine, str(uuid.uuid4()), "not-an-id", "' OR 1=1 --", ""):
        with pytest.raises(ConversationNotFound):
            store.get("bob", cid)
        with pytest.raises(ConversationNotFound):
            store.rename("bob", cid, "mine now")
        with pytest.raises(ConversationNotFound):
            store.delete("bob", cid)
        with pytest.raises(ConversationNotFound):
            store.history("bob", cid, 6)
        with pytest.raises(ConversationNotFound):
            store.append("bob", cid, done("q"))
    assert store.list("bob") == []
    assert store.get("alice", mine)["title"] != "mine now" and store.get("alice", mine)["blocks"] == []


def test_history_is_the_last_messages_of_answered_turns(store: ConversationStore) -> None:
    cid = store.create("alice")["id"]
    store.append("alice", cid, done("q0"))
    store.append("alice", cid, Turn("q1", "", "error", error_label="ragTechnicalError"))
    store.append("alice", cid, done("q2"))
    store.append("alice", cid, Turn("q3", "partial", "idle"))
    store.append("alice", cid, done("q4"))
    assert store.history("alice", cid, 4) == [
        {"role": "user", "content": "q2"},
        {"role": "assistant", "content": "answer to q2"},
        {"role": "user", "content": "q4"},
        {"role": "assistant", "content": "answer to q4"},
    ]
    assert [m["content"] for m in store.history("alice", cid, 3)] == ["answer to q2", "q4", "answer to q4"]
    assert store.history("alice", cid, 0) == []


def test_limits_are_clear_errors_and_write_nothing(store: ConversationStore) -> None:
    ids = [store.create("alice")["id"] for _ in range(5)]
    with pytest.raises(ConversationLimit, match="at most 5 conversations"):
        store.create("alice")
    assert len(store.list("alice")) == 5 and store.create("bob")  # per user
    for i in range(6):
        store.append("alice", ids[0], done(f"q{i}"))
    with pytest.raises(ConversationLimit, match="at most 6 questions"):
        store.append("alice", ids[0], done("one too many"))
    assert len(store.get("alice", ids[0])["blocks"]) == 6


def test_turns_written_at_once_each_get_their_own_place(store: ConversationStore) -> None:
    store.max_turns = 100
    cid = store.create("alice")["id"]
    errors: list[BaseException] = []

    def write(i: int) -> None:
        try:
            store.append("alice", cid, done(f"question {i}"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    blocks = store.get("alice", cid)["blocks"]
    assert [b["position"] for b in blocks] == list(range(8))
    assert sorted(b["question"] for b in blocks) == sorted(f"question {i}" for i in range(8))


def test_a_store_that_cannot_be_reached_says_so() -> None:
    url = "postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=2"
    store = ConversationStore(open_engine(url))
    with pytest.raises(StoreUnavailable):
        store.create("alice")
    with pytest.raises(StoreUnavailable):
        store.list("alice")
    with pytest.raises(StoreUnavailable, match="cannot be prepared"):
        StoreHandle(Settings(store_url=url)).engine()


def test_token_statistics_add_up_per_user_conversation_day_and_model(store: ConversationStore) -> None:
    cid = store.create("alice")["id"]
    usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120, "estimated": False}
    store.add_usage("alice", cid, "gpt-x", usage)
    store.add_usage("alice", cid, "gpt-x", usage)
    store.add_usage("alice", None, "gpt-x", usage)
    store.add_usage("bob", None, "other-model", {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6})
    mine = store.usage("alice")
    assert len(mine) == 2 and {r["conversation_id"] for r in mine} == {cid, ""}
    [room] = store.usage("alice", cid)
    assert (room["answers"], room["prompt_tokens"], room["completion_tokens"], room["total_tokens"]) == (
        2,
        200,
        40,
        240,
    )
    assert room["model"] == "gpt-x" and len(room["day"]) == 10
    assert {r["username"] for r in store.usage()} == {"alice", "bob"}  # an administrator's view
    assert store.usage("carol") == []


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_sqlite_file_deleted_or_replaced_under_the_sidecar_refuses_every_write(tmp_path: Path, how: str) -> None:
    """An open SQLite connection keeps writing to a deleted file's inode: every answer said OK for
    conversations gone at the next start (125 conversations, 732 turns). Now nothing is written
    once the file is not the store's any more; the same file back makes it work again."""
    path = tmp_path / "conversations.db"
    engine = open_engine(f"sqlite:///{path}")
    migrate(engine)
    store = ConversationStore(engine)
    kept = store.create("alice", "Before")
    store.append("alice", kept["id"], done("q1"))
    moved = tmp_path / "moved.db"
    path.rename(moved)
    if how == "replaced":
        path.write_bytes(b"")  # another file at the same path
    with pytest.raises(StoreUnavailable, match="deleted or replaced"):
        store.append("alice", kept["id"], done("q2"))
    with pytest.raises(StoreUnavailable):
        store.create("alice", "After")
    if how == "deleted":
        moved.rename(path)  # the same file back: it works again, nothing lost
        store.append("alice", kept["id"], done("q3"))
        assert [b["question"] for b in store.get("alice", kept["id"])["blocks"]] == ["q1", "q3"]
    else:  # another file stays refused until a restart opens it as the store
        with pytest.raises(StoreUnavailable, match="deleted or replaced"):
            store.list("alice")
    store.close()
