"""The experiment of bench/contradiction_spans.py: how it cuts a pair into value spans and frame, and that its
neighbour features never let a pair (or, for training rows, its own batch) vote for itself (no model run)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import contradiction_model as cm
import contradiction_spans as cs

from tests.support.conflicts_eval import Judged, Pair


def test_split_keeps_the_changed_content_words_and_the_shared_frame() -> None:
    assert cs.split("Leo's swim coach is Marta.", "Leo's swim coach is Dan now.") == (
        "marta",
        "dan",
        "leo's swim coach is",
    )
    old, new, frame = cs.split("Logs go to Datadog.", "Logs go to Datadog and are kept for 15 days.")
    assert old == "" and new == "kept 15 days" and frame == "logs go to datadog"
    assert cs.split("The app does not work offline.", "The app works offline.")[0] == ""  # a negation is no value


def _row(batch: str, label: str, direction: np.ndarray) -> cm.Row:
    pair = Pair(f"{batch}-{label}", "test", label, "value", "a", "b")
    unit = direction / np.linalg.norm(direction)
    features = {"sa": unit, "sb": unit, "textdiff": unit, "spandiff": unit}
    return cm.Row(pair, batch, Judged(pair, 0.9, True, None, False), features)


def test_neighbours_come_from_other_batches_for_training_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    x, y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    reference = [_row("1", "contradiction", x), _row("2", "compatible", y), _row("2", "compatible", x + 0.1 * y)]
    monkeypatch.setattr(cs, "K", 1)
    own_apart = cs.with_knn(reference[:1], reference, own_batch_apart=True)[0].features["knntext"]
    allowed = cs.with_knn(reference[:1], reference, own_batch_apart=False)[0].features["knntext"]
    assert own_apart[0] == 0.0  # its nearest other-batch change is a compatible pair
    assert allowed[0] == 1.0  # with its own batch allowed it finds itself
