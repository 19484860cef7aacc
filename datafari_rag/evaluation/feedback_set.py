"""The answers users rated good, as an evaluation set: ``qa.jsonl`` (each question with the
answer rated good, the first document it cited as its gold document) and ``corpus.jsonl`` (those
documents' text, read as the indexer) — the folder ``datafari-rag eval answers`` reads. It is an
operator's export, from the server's own store and index, like the evaluation itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..conversations.feedback import FeedbackStore
from ..solr.collection import Collection


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def export_good_answers(feedback: FeedbackStore, main: Collection, folder: Path) -> tuple[int, int]:
    """Writes the set into ``folder``; returns (questions, documents)."""
    good = feedback.good_answers()
    cited = list(dict.fromkeys(str(s["id"]) for g in good for s in g["sources"] if s.get("id")))
    docs = {
        d["id"]: d
        for start in range(0, len(cited), 200)
        for d in main.get(cited[start : start + 200], "id,title,exactContent")
    }
    qa = [
        {
            "id": g["block_id"],
            "question": g["question"],
            "answers": [g["answer"]],
            "is_impossible": False,
            "gold_doc_id": next((str(s["id"]) for s in g["sources"] if str(s.get("id")) in docs), None),
            "user": g["username"],
            "comment": g["comment"],
        }
        for g in good
    ]
    corpus = [
        {"_id": i, "title": _text(docs[i].get("title")), "text": _text(docs[i].get("exactContent"))}
        for i in cited
        if i in docs
    ]
    folder.mkdir(parents=True, exist_ok=True)
    _jsonl(folder / "qa.jsonl", qa)
    _jsonl(folder / "corpus.jsonl", corpus)
    return len(qa), len(corpus)


def _text(value: Any) -> str:
    return " ".join(value) if isinstance(value, list) else str(value or "")
