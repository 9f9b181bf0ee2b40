"""The nearest labelled changes of the learned judge (engram/domain/conflict_rules/neighbours.py): the columns on a
hand-made reference set whose answer is known, their determinism, the default without vectors, the explanation,
and that the shipped references are what ``bench/contradiction_model.py --references`` builds from the committed
pairs and vectors."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from engram.domain import conflict_rules
from engram.domain.conflict_rules import learned, neighbours
from tests.support.conflicts_eval import FLOOR, load_pairs, references_for, similarity, stored_vectors

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import contradiction_model as cm

MISSED = ("Monitoring is done with Nagios.", "Nagios was retired; monitoring is Prometheus now.")  # q063, batch 2


def _references() -> neighbours.References:
    """Four labelled changes in three dimensions: contradictions move along x, compatible pairs along y."""
    directions = np.array([[1, 0, 0], [0.8, 0.6, 0], [0, 1, 0], [0, 0.6, 0.8]], dtype=np.float32)
    return neighbours.from_arrays(
        neighbours.build(directions, np.array([1, 1, 0, 0]), ["c1", "c2", "k1", "k2"], ["1", "2", "1", "2"])
    )


def test_a_change_like_the_contradictions_gets_their_share_and_margin() -> None:
    towards = neighbours.direction(np.array([0.0, 0.0, 2.0]), np.array([1.0, 0.0, 0.0]))  # each made unit first
    assert towards is not None and np.allclose(towards, np.array([1, 0, -1]) / np.sqrt(2))
    near = neighbours.nearest(towards, _references(), k=2)
    assert near.ids == ("c1", "c2") and near.contradictions == 2 and near.share == 1.0
    # best cosine to a contradiction (c1: 0.707) less the best to a compatible pair (k1: 0; k2: -0.566)
    assert near.margin == pytest.approx(1 / np.sqrt(2), abs=1e-3)
    assert near.row == [near.share, near.margin]
    assert near.describe() == "nearest labelled changes: 2 of 2 contradictions (c1, c2)"


def test_excluded_references_are_never_counted_and_ties_keep_the_file_order() -> None:
    refs = _references()
    near = neighbours.nearest(np.array([1.0, 0.0, 0.0]), refs, exclude=refs.batches == "1", k=2)
    assert near.ids == ("c2", "k2") and near.share == 0.5  # c1 and k1 (batch 1) left out
    assert near.margin == pytest.approx(0.8 - 0.0, abs=1e-3)
    tied = neighbours.nearest(np.array([0.0, 0.0, -1.0]), refs.subset(np.array([True, True, True, False])), k=3)
    assert tied.ids == ("c1", "c2", "k1")  # all at cosine 0: in file order
    only = neighbours.nearest(np.array([1.0, 0.0, 0.0]), refs, exclude=np.ones(4, dtype=bool))
    assert (only.ids, only.share, only.margin) == ((), 0.0, 0.0)


def test_no_direction_without_two_usable_vectors() -> None:
    a = np.array([1.0, 0.0, 0.0])
    assert neighbours.direction(None, a) is None and neighbours.direction(a, None) is None
    assert neighbours.direction(a, 2 * a) is None  # the same meaning: no change
    assert neighbours.direction(a, np.zeros(3)) is None
    assert neighbours.direction(a, np.ones(4)) is None
    vectors = stored_vectors()
    pair = (vectors[MISSED[0]], vectors[MISSED[1]])
    assert learned.nearest(pair) is not None
    assert learned.nearest(None) is None
    assert learned.nearest(pair, profile="text-embedding-3-small:384") is None  # another model's space
    assert learned.nearest((pair[0][:100], pair[1][:100])) is None  # another size than the references'


def test_the_columns_are_deterministic_and_read_their_fitted_means_without_vectors() -> None:
    vectors = stored_vectors()
    sim = similarity(vectors, *MISSED)
    pair = (vectors[MISSED[0]], vectors[MISSED[1]])
    first, second = learned.nearest(pair), learned.nearest(pair)
    assert first == second and first is not None and len(first.ids) == neighbours.K
    model = learned.shipped()
    bare = learned.features(*MISSED, sim, None)
    assert np.array_equal(bare[-2:], model.mean[-2:])  # the documented default: the fitted means
    assert np.all(model.contributions(bare)[-2:] == 0)  # which add nothing to the log-odds
    row = learned.features(*MISSED, sim, None, first)
    gate = learned.one_thing(*MISSED)
    assert gate == pytest.approx(2 / 3)  # "monitor", "nagios" of the existing text's three stems
    expected = [m + gate * (x - m) for m, x in zip(model.neutral, first.row, strict=True)]  # drawn to the neutral
    assert np.array_equal(row[:-2], bare[:-2]) and list(row[-2:]) == pytest.approx(expected)
    # the judge without vectors is the judge with the neighbour columns at their means
    assert conflict_rules.judge_with_learned(*MISSED, sim, floor=FLOOR) == conflict_rules.judge_with_learned(
        *MISSED, sim, floor=FLOOR, vectors=(None, pair[1])
    )


def test_a_flag_names_its_nearest_labelled_changes() -> None:
    vectors = stored_vectors()
    sim = similarity(vectors, *MISSED)
    [pair] = [p for p in load_pairs(batch="2") if (p.existing, p.new) == MISSED]
    references = references_for(pair)
    assert "2" not in set(references.batches)  # its own batch left out, as when the judge was fitted
    verdicts = [
        conflict_rules.judge_with_learned(
            *MISSED, sim, floor=FLOOR, vectors=(vectors[MISSED[0]], vectors[MISSED[1]]), references=references
        )
        for _ in range(2)
    ]
    assert verdicts[0] == verdicts[1] and verdicts[0] is not None
    assert verdicts[0].rule == conflict_rules.LEARNED_RULE
    near = learned.nearest((vectors[MISSED[0]], vectors[MISSED[1]]), references=references)
    assert near is not None and verdicts[0].explanation.endswith(f"; {near.describe()}")
    assert f"nearest labelled changes: {near.contradictions} of 10 contradictions (" in verdicts[0].explanation


def test_the_shipped_references_are_what_the_build_makes() -> None:
    pairs, batch_of, vectors = cm.load_batches(cm.FIT_BATCHES)
    built = cm.labelled_directions(pairs, batch_of, vectors)  # what --references writes
    with np.load(neighbours.REFERENCES_PATH, allow_pickle=False) as shipped:
        assert set(shipped.files) == set(built)
        for name in built:
            assert np.array_equal(shipped[name], built[name]), name
        assert shipped["directions"].shape == (2024, 384) and shipped["directions"].dtype == np.float16
        assert str(shipped["profile"]) == neighbours.PROFILE
        assert list(shipped["ids"]) == [p.id for p in load_pairs(batch=",".join(cm.FIT_BATCHES))]
