"""Fits the answers' relevance (``RELEVANCE`` in datafari_rag/rag/confidence.py) on runs of
``datafari-rag eval answers --json``.

For every answer given (not abstained), two measures of whether it answers its question: the
cosine of its embedding with the question's (the chunks' model, through the configured embedding
service) and the share of the question's words it holds. A logistic regression of "the answer holds
a gold answer" on them gives the chance an answer is right; printed with its AUC (right against
wrong answers, and answerable against unanswerable questions) on each run.

    datafari-rag eval answers ../shared/data/squad2-dev-half --method bm25 --json squad.json
    datafari-rag eval answers ../shared/data/piaf-fr-dev --method bm25 --lang fr --withhold 0.5 --json piaf.json
    python -m bench.calibrate_confidence squad.json piaf.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from datafari_rag.config import load_settings
from datafari_rag.evaluation.answers import auc
from datafari_rag.indexing.embedder import ChunkEmbedder
from datafari_rag.rag.confidence import uncited
from datafari_rag.words import content_words, support


def measures(run: Path, embed: ChunkEmbedder) -> list[tuple[float, float, bool, bool]]:
    """(cosine, share of the question's words, right, unanswerable) of each answer of a run."""
    data = json.loads(run.read_text())
    asked = {}
    for line in (Path(data["folder"]) / "qa.jsonl").read_text().splitlines():
        if line.strip():
            q = json.loads(line)
            asked[str(q["id"])] = q["question"]
    rows = []
    for o in data["outcomes"]:
        if o["status"] != "OK" or o["abstained"]:
            continue
        question, answer = asked[o["id"]], uncited(o["answer"])
        v = np.array(embed.embed([question, answer]))
        cosine = float(v[0] @ v[1] / (np.linalg.norm(v[0]) * np.linalg.norm(v[1])))
        right = not o["is_impossible"] and o["contains"]
        rows.append((cosine, support(content_words(question), answer), right, o["is_impossible"]))
    return rows


def fit(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Logistic regression by Newton's method (a tiny ridge keeps it defined)."""
    w = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-x @ w))
        hessian = (x * (p * (1 - p))[:, None]).T @ x + 1e-6 * np.eye(x.shape[1])
        w += np.linalg.solve(hessian, x.T @ (y - p))
    return w


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="eval answers --json files")
    args = parser.parse_args()
    embed = ChunkEmbedder(load_settings())
    by_run = {run: measures(run, embed) for run in args.runs}
    rows = [r for found in by_run.values() for r in found]
    x = np.array([[1.0, c, s] for c, s, _, _ in rows])
    w = fit(x, np.array([float(r) for _, _, r, _ in rows]))
    print(f"RELEVANCE = ({w[0]:.3f}, {w[1]:.3f}, {w[2]:.3f})  # fitted on {len(rows)} answers")
    for run, found in by_run.items():
        p = 1 / (1 + np.exp(-np.array([[1.0, c, s] for c, s, _, _ in found]) @ w))
        right = [float(v) for v, r in zip(p, found, strict=True) if r[2]]
        wrong = [float(v) for v, r in zip(p, found, strict=True) if not r[2]]
        answerable = [float(v) for v, r in zip(p, found, strict=True) if not r[3]]
        unanswerable = [float(v) for v, r in zip(p, found, strict=True) if r[3]]
        print(
            f"{run.name}: {len(found)} answers, AUC right/wrong {auc(right, wrong):.3f}, "
            f"answerable/unanswerable {auc(answerable, unanswerable):.3f}"
        )


if __name__ == "__main__":
    main()
