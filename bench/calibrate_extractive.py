"""Calibrates the local generator's relevance threshold on SQuAD 2.0 (answerable questions).

For each question, the best cosine between the question and a sentence of its own paragraph
(relevant context) and of a paragraph from another article (irrelevant context). The threshold
that best separates the two is printed, with its accuracy; DEFAULT_THRESHOLD in
datafari_rag/agent/extractive.py holds the value measured here.
"""

from __future__ import annotations

import argparse
import json
import random

import numpy as np

from datafari_rag.agent.extractive import sentences
from datafari_rag.agent.model import SentenceEmbedder
from datafari_rag.paths import PROJECT_ROOT

SQUAD = PROJECT_ROOT.parent / "shared" / "data" / "squad2-dev-half"


def best_cosine(embedder: SentenceEmbedder, question: str, paragraph: str) -> float:
    vectors = embedder.embed([question, *sentences(paragraph)])
    return float((vectors[1:] @ vectors[0]).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    corpus = {d["_id"]: d for d in map(json.loads, (SQUAD / "corpus.jsonl").open(encoding="utf-8"))}
    qa = [q for q in map(json.loads, (SQUAD / "qa.jsonl").open(encoding="utf-8")) if not q["is_impossible"]]
    sample = rng.sample(qa, args.questions)
    embedder = SentenceEmbedder()
    relevant, irrelevant = [], []
    for q in sample:
        gold = corpus[q["gold_doc_id"]]
        other = rng.choice([d for d in corpus.values() if d["title"] != gold["title"]])
        relevant.append(best_cosine(embedder, q["question"], gold["text"]))
        irrelevant.append(best_cosine(embedder, q["question"], other["text"]))
    pos, neg = np.array(relevant), np.array(irrelevant)
    grid = np.arange(0.05, 0.8, 0.01)
    accuracy = [((pos >= t).mean() + (neg < t).mean()) / 2 for t in grid]
    best = int(np.argmax(accuracy))
    print(
        f"extractive threshold: {grid[best]:.2f} (balanced accuracy {accuracy[best]:.3f}; "
        f"relevant median {np.median(pos):.2f}, irrelevant median {np.median(neg):.2f}; {args.questions} questions)"
    )


if __name__ == "__main__":
    main()
