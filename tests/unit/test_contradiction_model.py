"""The learned contradiction judge of bench/contradiction_model.py: its features and its fit on a small fixed
slice of batch 1 (the committed pairs and vectors, no model run)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import contradiction_model as cm

from engram.domain.conflict_rules import learned, neighbours


def _slice() -> list[cm.Row]:
    pairs, batch_of, vectors = cm.load_batches(("1",))
    rows = cm.featurise(pairs[::3], batch_of[::3], vectors)  # 80 pairs of both labels
    rows = cm.with_neighbours(rows, neighbours.shipped(), own_batch_apart=True)  # neighbours from batches 2-8
    rows = cm.with_gate(rows, learned.shipped().neutral)  # drawn to the shipped neutral as the gate falls
    assert {r.pair.label for r in rows} == {"contradiction", "compatible"}
    return rows


def test_word_features_see_what_differs() -> None:
    same = cm.word_features("Sam lives in Leeds.", "Sam lives in Leeds.", 1.0)
    moved = cm.word_features("Sam lives in Leeds.", "Sam no longer lives in Leeds.", 0.9)
    names = dict(zip(learned.WORD_FEATURES, moved, strict=True))
    assert dict(zip(learned.WORD_FEATURES, same, strict=True))["jaccard"] == 1.0
    assert names["negation_one_side"] == 1.0 and names["change_new_only"] == 1.0 and names["new_adds_only"] == 1.0
    capped = cm.word_features("The cap is 25 MB.", "The cap is 50 MB.", 0.9)
    assert capped[learned.WORD_FEATURES.index("numbers_differ")]


def test_fit_separates_its_training_slice_and_is_deterministic() -> None:
    rows = _slice()
    x, y = cm.design(rows, cm.FEATURES), cm.truth(rows)
    first = cm.fit(x, y, 10.0, cm.FEATURES)
    second = cm.fit(x, y, 10.0, cm.FEATURES)
    p = first.probability(x)
    assert np.array_equal(first.weights, second.weights)
    # ranking: a contradiction scores above a compatible pair far more often than chance (AUC > 0.9)
    pos, neg = p[y == 1], p[y == 0]
    auc = float(np.mean(pos[:, None] > neg[None, :]))
    assert auc > 0.9
    # and the weights round-trip through the JSON the lead scores with
    again = cm.Model.from_json(first.to_json())
    assert np.allclose(again.probability(x), p, atol=1e-5)
