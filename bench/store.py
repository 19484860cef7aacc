"""The conversation store's cost per turn: what a question asked in a conversation adds to its
answer — reading the history and checking the room before, writing the turn and the statistics
after — on SQLite and on a real PostgreSQL server, against one ``SELECT 1`` round trip on the same
database in the same run. Prints one line with the p50 of each."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from sqlalchemy import text

from bench.common import Figure, emit, percentile
from datafari_rag.conversations import ConversationStore, Turn
from datafari_rag.store.database import migrate, open_engine
from datafari_rag.testing.postgres import new_database, postgres

USAGE = {"prompt_tokens": 900, "completion_tokens": 120, "total_tokens": 1020}
SOURCES = [
    {"id": f"doc-{i}", "title": f"Document {i}", "url": f"file://d/{i}", "number": i, "cited": i < 2}
    for i in range(1, 6)
]


def measure(url: str, turns: int) -> tuple[float, float]:
    """(p50 ms of one turn's store work, p50 ms of a SELECT 1), on the database at ``url``."""
    engine = open_engine(url)
    migrate(engine)
    store = ConversationStore(engine, max_turns=turns + 10)
    cid = store.create("bench-user")["id"]
    costs, trips = [], []
    for i in range(turns + 5):
        began = time.perf_counter()
        store.prepare_turn("bench-user", cid, 6)
        turn = Turn(f"Question {i}?", f"Answer {i} [1].", "done", sources=SOURCES, usage=USAGE, latency_ms=900)
        store.append("bench-user", cid, turn)
        store.add_usage("bench-user", cid, "bench-model", USAGE)
        cost = (time.perf_counter() - began) * 1000
        began = time.perf_counter()
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        trip = (time.perf_counter() - began) * 1000
        if i >= 5:  # warm-up
            costs.append(cost)
            trips.append(trip)
    store.close()
    return percentile(costs, 50), percentile(trips, 50)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="50 turns instead of 300")
    args = parser.parse_args()
    turns = 50 if args.quick else 300
    with tempfile.TemporaryDirectory() as folder:
        sqlite = measure(f"sqlite:///{Path(folder) / 'conversations.db'}", turns)
        with postgres(Path(folder) / "pg") as server:
            pg = measure(new_database(server), turns)
    emit(
        "store",
        f"store: one turn's store work (history, room check, the turn, the statistics) p50 SQLite {sqlite[0]:.2f} ms "
        f"(SELECT 1: {sqlite[1]:.2f} ms), PostgreSQL {pg[0]:.2f} ms (SELECT 1: {pg[1]:.2f} ms); {turns} turns each",
        Figure("store cost per turn, SQLite, p50", sqlite[0], "ms"),
        Figure("store cost per turn, PostgreSQL, p50", pg[0], "ms"),
    )


if __name__ == "__main__":
    main()
