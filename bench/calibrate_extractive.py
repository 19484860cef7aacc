"""Calibrates the local generator's thresholds on SQuAD 2.0 and PIAF (French).

Default: for each answerable SQuAD question, the best cosine between the question and a sentence
of its own paragraph (relevant context) and of a paragraph from another article (irrelevant
context); the threshold that best separates the two is printed, with its accuracy
(DEFAULT_THRESHOLD in datafari_rag/agent/extractive.py).

``--support``: with that cosine, the share of the question's words a cited sentence must hold
(DEFAULT_SUPPORT). For each candidate, how often the generator answers an answerable question
from its own paragraph (1 - false abstention), abstains on SQuAD's unanswerable questions (their
own paragraph) and on a paragraph of another article, in English and in French; the support kept
is the one that abstains most on unrelated French paragraphs while both languages keep false
abstention at or below 0.1.
"""

from __future__ import annotations

import argparse
import json
import random

import numpy as np

from datafari_rag.agent.extractive import DEFAULT_THRESHOLD, content_words, sentences
from datafari_rag.agent.model import SentenceEmbedder
from datafari_rag.paths import PROJECT_ROOT

DATA = PROJECT_ROOT.parent / "shared" / "data"
SQUAD = DATA / "squad2-dev-half"
PIAF = DATA / "piaf-fr-dev"
Scored = list[tuple[float, int, int]]  # per sentence: cosine, question words held, question words


def scored(embedder: SentenceEmbedder, question: str, paragraph: str) -> Scored:
    found = sentences(paragraph)
    vectors = embedder.embed([question, *found])
    asked = content_words(question)
    rows = []
    for cosine, sentence in zip(vectors[1:] @ vectors[0], found, strict=True):
        held = {w[:5] for w in content_words(sentence)}
        rows.append((float(cosine), sum(w[:5] in held for w in asked), len(asked)))
    return rows


def elsewhere(rng: random.Random, corpus: dict[str, dict], q: dict) -> str:
    """A paragraph of another article than the question's."""
    title = corpus[q["gold_doc_id"]].get("title")
    return corpus[rng.choice([i for i in corpus if corpus[i].get("title") != title])]["text"]


def answers(items: list[Scored], threshold: float, support: float) -> float:
    """How often some sentence is cited (the generator answers)."""
    cited = [any(c >= threshold and (n == 0 or h / n >= support) for c, h, n in rows) for rows in items]
    return float(np.mean(cited)) if cited else float("nan")


def calibrate_support(embedder: SentenceEmbedder, size: int, seed: int) -> None:
    sets = {}
    for name, folder in (("en", SQUAD), ("fr", PIAF)):
        rng = random.Random(seed)
        corpus = {d["_id"]: d for d in map(json.loads, (folder / "corpus.jsonl").open(encoding="utf-8"))}
        qa = list(map(json.loads, (folder / "qa.jsonl").open(encoding="utf-8")))
        answerable = rng.sample([q for q in qa if not q.get("is_impossible")], size)
        impossible = [q for q in qa if q.get("is_impossible")]
        impossible = rng.sample(impossible, min(size, len(impossible)))
        sets[name] = {
            "own": [scored(embedder, q["question"], corpus[q["gold_doc_id"]]["text"]) for q in answerable],
            "impossible": [scored(embedder, q["question"], corpus[q["gold_doc_id"]]["text"]) for q in impossible],
            "other": [scored(embedder, q["question"], elsewhere(rng, corpus, q)) for q in answerable],
        }
    kept, best = 0.0, -1.0
    for support in (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4):
        en, fr = sets["en"], sets["fr"]
        row = {
            "answered en": answers(en["own"], DEFAULT_THRESHOLD, support),
            "abstained en unanswerable": 1 - answers(en["impossible"], DEFAULT_THRESHOLD, support),
            "abstained en other article": 1 - answers(en["other"], DEFAULT_THRESHOLD, support),
            "answered fr": answers(fr["own"], DEFAULT_THRESHOLD, support),
            "abstained fr other article": 1 - answers(fr["other"], DEFAULT_THRESHOLD, support),
        }
        print(f"support {support:.2f}: " + ", ".join(f"{k} {v:.3f}" for k, v in row.items()))
        if min(row["answered en"], row["answered fr"]) >= 0.9 and row["abstained fr other article"] > best:
            kept, best = support, row["abstained fr other article"]
    print(f"extractive support: {kept:.2f} (cosine {DEFAULT_THRESHOLD}; {size} questions per set)")


def best_cosine(embedder: SentenceEmbedder, question: str, paragraph: str) -> float:
    vectors = embedder.embed([question, *sentences(paragraph)])
    return float((vectors[1:] @ vectors[0]).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--support", action="store_true", help="calibrate the support threshold")
    args = parser.parse_args()
    if args.support:
        calibrate_support(SentenceEmbedder(), min(args.questions, 300), args.seed)
        return
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
