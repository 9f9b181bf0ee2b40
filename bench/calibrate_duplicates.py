"""Calibrate the near-duplicate threshold of the conflict rules (``NEAR_IDENTICAL``) on the Microsoft Research
Paraphrase Corpus, and measure the duplicate labelling as the conflicts consumer applies it.

    python bench/calibrate_duplicates.py --data PATH/msrp      # the directory holding msr-para-{train,val,test}.tsv

Each sentence gets its stored vector (multilingual-e5-small, passage mode; bench/passage_vectors.py caches
them); a pair's similarity is the cosine of the two. A pair is called a duplicate when
``conflict_rules.judge`` labels it ``duplicate`` at the consumer's similarity floor: the same text, the same
content words, or a similarity of at least the threshold with the same values and polarity — and no
contradiction rule fired first. Thresholds from 0.85 to 0.99 in steps of 0.005 are tried on train + val; the
chosen one is the threshold with the best F1 among those with a precision of at least ``--min-precision``
(0.9): a duplicate takes its pair's second recall slot away, so a false one hides a fact. Precision, recall
and F1 at the chosen threshold are then reported on test, beside the cosine alone (no rules) for reference.

The corpus is read at run time from ``--data`` (non-commercial licence; never copied into the repository).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import numpy as np
from passage_vectors import passages

from engram.domain import conflict_rules

SPLITS = ("train", "val", "test")
THRESHOLDS = [round(0.85 + 0.005 * i, 3) for i in range(29)]
OFF = 1.01  # a similarity no pair reaches: the near-identical rule never fires


def load(data: Path, name: str) -> list[tuple[int, str, str]]:
    with (data / f"msr-para-{name}.tsv").open(encoding="utf-8-sig") as handle:
        rows = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(rows)
        return [(int(r[0]), r[3], r[4]) for r in rows if len(r) >= 5]


def scores(predicted: list[bool], labels: list[int]) -> dict[str, float]:
    """Precision, recall and F1, unrounded (``rounded`` is for the report)."""
    tp = sum(1 for p, y in zip(predicted, labels, strict=True) if p and y == 1)
    fp = sum(1 for p, y in zip(predicted, labels, strict=True) if p and y == 0)
    fn = sum(1 for p, y in zip(predicted, labels, strict=True) if not p and y == 1)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "called": tp + fp}


def rounded(score: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 4) if k != "called" else v for k, v in score.items()}


class Labeller:
    """The rules' duplicate calls on a set of pairs, at any threshold. A pair's label depends on the threshold
    only through whether its similarity reaches it, so each pair is judged twice: with the near-identical
    rule allowed (threshold 0) and with it off."""

    def __init__(self, pairs: list[tuple[int, str, str]], sims: np.ndarray, floor: float) -> None:
        self.sims = sims
        self.off = [self._label(a, b, float(s), floor, OFF) for (_, a, b), s in zip(pairs, sims, strict=True)]
        self.on = [self._label(a, b, float(s), floor, 0.0) for (_, a, b), s in zip(pairs, sims, strict=True)]

    @staticmethod
    def _label(a: str, b: str, similarity: float, floor: float, threshold: float) -> str | None:
        verdict = conflict_rules.judge(a, b, similarity, floor=floor, near_identical=threshold)
        return verdict.label if verdict else None

    def duplicates(self, threshold: float) -> list[bool]:
        return [
            (on if s >= threshold else off) == "duplicate"
            for on, off, s in zip(self.on, self.off, self.sims, strict=True)
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="the MSRP directory")
    parser.add_argument("--floor", type=float, default=0.85, help="ENGRAM_CONFLICT_SIMILARITY_FLOOR")
    parser.add_argument("--min-precision", type=float, default=0.9)
    args = parser.parse_args()
    if not (args.data / "msr-para-test.tsv").exists():
        sys.exit(f"MSRP data not found at {args.data}")
    split = {name: load(args.data, name) for name in SPLITS}
    texts = [t for name in SPLITS for _, a, b in split[name] for t in (a, b)]
    matrix = passages(texts)
    sims: dict[str, np.ndarray] = {}
    at = 0
    for name in SPLITS:
        n = len(split[name])
        block = matrix[at : at + 2 * n]
        sims[name] = np.einsum("ij,ij->i", block[0::2], block[1::2])
        at += 2 * n
    dev_pairs = split["train"] + split["val"]
    dev_sims = np.concatenate([sims["train"], sims["val"]])
    dev_labels = [y for y, _, _ in dev_pairs]
    dev = Labeller(dev_pairs, dev_sims, args.floor)
    sweep = {t: scores(dev.duplicates(t), dev_labels) for t in THRESHOLDS}
    eligible = [t for t in THRESHOLDS if sweep[t]["precision"] >= args.min_precision and sweep[t]["called"]]
    chosen = max(eligible, key=lambda t: (sweep[t]["f1"], -t)) if eligible else max(THRESHOLDS)
    test_labels = [y for y, _, _ in split["test"]]
    test = Labeller(split["test"], sims["test"], args.floor)
    cosine_only = {t: rounded(scores([bool(s >= t) for s in sims["test"]], test_labels)) for t in (0.9, 0.95, chosen)}
    report = {
        "pairs": {name: len(split[name]) for name in SPLITS},
        "paraphrase_share_test": round(sum(test_labels) / len(test_labels), 3),
        "floor": args.floor,
        "min_precision": args.min_precision,
        "chosen": chosen,
        "dev_at_chosen": rounded(sweep[chosen]),
        "test_at_chosen": rounded(scores(test.duplicates(chosen), test_labels)),
        "test_at_0.97": rounded(scores(test.duplicates(0.97), test_labels)),
        "test_rules_without_near_identical": rounded(scores([x == "duplicate" for x in test.off], test_labels)),
        "test_cosine_alone": {str(t): v for t, v in cosine_only.items()},
        "dev_sweep": {str(t): rounded(v) for t, v in sweep.items()},
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
