"""Fits the second stage of hybrid recall (``engram/domain/rerank.py``) on the LoCoMo dev conversations.

    cd bench && python locomo.py --split dev --candidates /tmp/dev-candidates.json   # the first stage, dumped
    python bench/rerank_fit.py /tmp/dev-candidates.json                             # fit, compare, print

The dump holds, for each dev question, the candidates of ``Ranking.candidates`` (the keyword and semantic
lists as the recall service gets them) with a label: 1 for a memory of an evidence turn. The fit is an
L2-regularised logistic regression (Newton's method, deterministic) over ``rerank.features``. It prints the
first-stage ordering of the candidates (the weighted sum with the subject boost, as recall scores them
without the second stage) against the fitted model's, by MRR and R@10 over the candidates alone (no session
context, no trust), both on all dev questions (fitted on them) and leaving one conversation out at a time
(fitted on the other two), then the weights to commit. Only dev conversations are ever dumped or fitted.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from engram.domain import rerank, scoring

K = 10


def rows(question: dict[str, object]) -> tuple[list[str], np.ndarray, np.ndarray, dict[str, float]]:
    """The candidate ids, their feature matrix, labels, and the first-stage relevance of each."""
    cands = question["candidates"]  # type: ignore[index]
    keyword = {c["id"]: c["keyword"] for c in cands if c["keyword"] is not None}
    dense = {c["id"]: c["dense"] for c in cands if c["dense"] is not None}
    words = scoring.words(str(question["question"]))
    given = {
        c["id"]: rerank.Candidate(c["content"], c["keyword"], c["dense"], scoring.names_subject(words, c["subject"]))
        for c in cands
    }
    vectors = rerank.features(str(question["question"]), given, keyword, dense)
    ids = [c["id"] for c in cands]
    first = scoring.fuse(keyword, dense)
    for key in ids:
        if given[key].subject_named:
            first[key] *= 1 + scoring.SUBJECT_BOOST
    return ids, np.array([vectors[i] for i in ids]), np.array([c["label"] for c in cands], dtype=float), first


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    """Logistic regression by Newton's method: [bias, weights…]."""
    x1 = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(x1.shape[1])
    penalty = l2 * np.eye(len(w))
    penalty[0, 0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-(x1 @ w)))
        grad = x1.T @ (p - y) + penalty @ w
        hess = (x1 * (p * (1 - p))[:, None]).T @ x1 + penalty
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def metrics(order: list[str], labels: dict[str, float], total: int) -> tuple[float, float]:
    """MRR and the share of the question's relevant candidates in the top K (of those the first stage found)."""
    hits = [labels[i] for i in order[:K]]
    first = next((n for n, h in enumerate(hits, start=1) if h), 0)
    return (1 / first if first else 0.0), (sum(hits) / total if total else 0.0)


def evaluate(data: list[dict[str, object]], w: np.ndarray | None) -> dict[str, float]:
    mrr, r10 = [], []
    for q in data:
        ids, x, y, first = rows(q)
        labels = dict(zip(ids, y, strict=True))
        total = len(q["evidence"])  # type: ignore[arg-type]
        if w is None:
            order = sorted(ids, key=lambda i: (-first[i], i))
        else:
            z = w[0] + x @ w[1:]
            score = dict(zip(ids, z, strict=True))
            order = sorted(ids, key=lambda i: (-score[i], i))
        m, r = metrics(order, labels, total)
        mrr.append(m)
        r10.append(r)
    return {"mrr": round(float(np.mean(mrr)), 4), "r10": round(float(np.mean(r10)), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("candidates", type=Path)
    parser.add_argument("--l2", type=float, default=1.0)
    args = parser.parse_args()
    data = json.loads(args.candidates.read_text())
    assert all(q["conversation"] in ("conv-26", "conv-30", "conv-41") for q in data), "dev conversations only"
    stacked = [rows(q) for q in data]
    x = np.vstack([s[1] for s in stacked])
    y = np.concatenate([s[2] for s in stacked])
    w = fit(x, y, args.l2)
    print(f"{len(data)} questions, {len(y)} candidates, {int(y.sum())} relevant")
    print("first stage (weighted sum):", evaluate(data, None))
    print("second stage, fitted on all dev:", evaluate(data, w))
    for held in sorted({str(q["conversation"]) for q in data}):
        train = [s for s, q in zip(stacked, data, strict=True) if q["conversation"] != held]
        test = [q for q in data if q["conversation"] == held]
        wh = fit(np.vstack([s[1] for s in train]), np.concatenate([s[2] for s in train]), args.l2)
        print(f"  {held} held out: first {evaluate(test, None)}  second {evaluate(test, wh)}")
    print(f"BIAS = {w[0]:.4f}")
    print("WEIGHTS = {" + ", ".join(f'"{n}": {v:.4f}' for n, v in zip(rerank.FEATURES, w[1:], strict=True)) + "}")


if __name__ == "__main__":
    main()
