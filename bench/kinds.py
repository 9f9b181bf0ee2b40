"""Kind classification without a language model, on the labelled memories of bench/data/kinds.

    python bench/kinds.py                   # the local kind model on the test part
    python bench/kinds.py --rules           # the cue phrases alone (the classifier before the kind model)
    python bench/kinds.py --split tune      # on the tuning part (what the model was fitted on)
    python bench/kinds.py --dated           # reading each text's dated vector (the date in front, as stored)

Prints kind accuracy over the real memories, per-kind precision and recall, the confusion matrix (rows: the
label, columns: the answer), chatter recall and the share of real memories taken for chatter, and a reliability
table of the kind confidence. The embeddings come from bench/data/kinds/vectors.npz (`bench/kind_model.py
vectors` fills it), so nothing is embedded here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.kinds_data import load
from tests.support.kinds_eval import dated_vectors, local_classifier, rules_classifier, score, stored_vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("test", "tune"), default="test")
    parser.add_argument("--rules", action="store_true", help="the cue phrases alone, without the kind model")
    parser.add_argument("--dated", action="store_true", help="the dated vectors (bench/data/kinds/vectors_dated.npz)")
    args = parser.parse_args()
    items = load(args.split)
    vectors = dated_vectors() if args.dated else stored_vectors()
    scores = score(items, rules_classifier() if args.rules else local_classifier(vectors))
    name = "rules only" if args.rules else "local kind model" + (" (dated vectors)" if args.dated else "")
    print(f"{name} on the {args.split} part: {scores.total} memories, {scores.chatter_total} chatter\n")
    print(f"kind accuracy: {scores.accuracy:.3f} ({scores.correct}/{scores.total})")
    print(f"chatter recall: {scores.chatter_recall:.3f} ({scores.chatter_found}/{scores.chatter_total})")
    print(f"real memories taken for chatter: {scores.false_chatter_rate:.3f} ({scores.false_chatter}/{scores.total})")
    print(f"expected calibration error: {scores.calibration_error():.3f}\n")
    print("| kind | precision | recall | n |\n|---|---|---|---|")
    for kind in scores.kinds:
        n = sum(c for (t, _), c in scores.confusion.items() if t == kind)
        print(f"| {kind} | {scores.precision(kind):.2f} | {scores.recall(kind):.2f} | {n} |")
    short = [k[:5] for k in scores.kinds]
    print("\n| label \\ answer | " + " | ".join(short) + " |\n" + "|---" * (len(short) + 1) + "|")
    for kind in scores.kinds:
        row = [str(scores.confusion.get((kind, p), 0) or ".") for p in scores.kinds]
        print(f"| {kind} | " + " | ".join(row) + " |")
    print("\n| confidence | n | mean confidence | accuracy |\n|---|---|---|---|")
    for low, high, n, confidence, accuracy in scores.reliability():
        print(f"| {low:.1f}–{high:.1f} | {n} | {confidence:.2f} | {accuracy:.2f} |")


if __name__ == "__main__":
    main()
