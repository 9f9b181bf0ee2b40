"""Floors for contradiction detection without a language model, measured on the committed test part of
bench/data/conflicts (never tuned on) the way the conflicts consumer judges a pair: the committed e5 passage
vectors, the candidate floor, the rules and the outcome. A change that lowers precision or recall below what
docs/benchmarks.md records fails here. ``python bench/contradictions.py --split test`` prints the figures."""

from __future__ import annotations

from tests.support.conflicts_eval import load_pairs, score, stored_vectors

PRECISION_FLOOR = 0.95
RECALL_FLOOR = 0.76  # measured 0.768 (docs/benchmarks.md), rounded down
COMPATIBLE_FLAGGED_CEILING = 2  # of the 40 compatible look-alikes of the test part


def test_test_split_precision_and_recall() -> None:
    scores = score(load_pairs("test"), stored_vectors())
    assert len(scores.judged) == 96
    assert scores.precision >= PRECISION_FLOOR, scores.precision
    assert scores.recall >= RECALL_FLOOR, scores.recall
    assert scores.false_positives <= COMPATIBLE_FLAGGED_CEILING


def test_look_alikes_of_the_test_split_stay_unflagged() -> None:
    scores = score(load_pairs("test"), stored_vectors())
    flagged = {kind: n for kind, (n, _) in scores.by_type().items()}
    for kind in ("same_topic", "compatible", "paraphrase", "unrelated"):
        assert flagged[kind] == 0, (kind, flagged[kind])


def test_every_pair_has_vectors_and_a_known_label() -> None:
    vectors, pairs = stored_vectors(), load_pairs(batch="all")
    assert len(pairs) >= 400
    assert len({p.id for p in pairs}) == len(pairs)
    assert {p.label for p in pairs} == {"contradiction", "compatible"}
    assert all(p.existing in vectors and p.new in vectors for p in pairs)
    assert {p.split for p in pairs} == {"tune", "test"}
