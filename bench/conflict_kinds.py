"""How often the two memories of a labelled conflict get the same kind from the local kind model, on the pairs of
bench/data/conflicts (both batches; contradictions, refinements and paraphrases: the pairs the conflicts consumer
should flag). Until docs/adr/0007-conflicts-compared-across-kinds.md the conflicts consumer compared only memories
of the same kind, so a pair split across kinds was never compared once both were classified (this is the figure
that decision rests on); it now compares across the non-episodic kinds, so only a pair with an episodic side is
left out.

    python bench/conflict_kinds.py     # per split: pairs, same final kind, existing memory classified "fact"
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engram.domain.classification import classify
from engram.pipeline.kind_model import load_kind_model
from tests.support.conflicts_eval import load_pairs, stored_vectors

FLAGGED_TYPES = ("refinement", "paraphrase")


def main() -> None:
    model, vectors = load_kind_model(), stored_vectors()

    def kind(text: str) -> str:
        return classify(text, model=model, vector=vectors[text]).kind

    for split in ("tune", "test"):
        pairs = [p for p in load_pairs(split, "all") if p.label == "contradiction" or p.type in FLAGGED_TYPES]
        same = sum(kind(p.existing) == kind(p.new) for p in pairs)
        fact = sum(kind(p.existing) == "fact" for p in pairs)
        print(
            f"{split}: {len(pairs)} pairs to flag; both of the same kind {same} ({same / len(pairs):.2f}); "
            f"the existing memory classified fact {fact} ({fact / len(pairs):.2f})"
        )


if __name__ == "__main__":
    main()
