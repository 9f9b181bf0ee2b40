"""Scoring a classifier on the labelled memories of bench/data/kinds: kind accuracy on the real memories, per-kind
precision and recall, the confusion matrix, chatter recall and false-chatter rate, and a reliability table of
the kind confidence. Used by bench/kinds.py and by the floors in tests/unit/test_kind_model.py."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np

from engram.domain.classification import Classification, classify
from engram.pipeline.kind_model import load_kind_model
from tests.support.kinds_data import CHATTER, MEMORIES, Labelled

VECTORS = MEMORIES.parent / "vectors.npz"
DATED_VECTORS = MEMORIES.parent / "vectors_dated.npz"  # the passage text with a date in front (kinds_dated_vectors.py)
FIRST_DAY, DAYS = datetime(2019, 1, 1, 12, tzinfo=UTC), 8 * 365
BINS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def stored_vectors() -> dict[str, np.ndarray]:
    """The committed embeddings of the labelled memories (bench/kind_model.py vectors)."""
    with np.load(VECTORS, allow_pickle=False) as data:
        return {str(t): v.astype(np.float32) for t, v in zip(data["texts"], data["vectors"], strict=True)}


def date_for(text: str) -> datetime:
    """The date a labelled text is embedded with in ``DATED_VECTORS``: a day fixed by a hash of the text."""
    day = int.from_bytes(hashlib.sha256(b"date:" + text.encode()).digest()[:4], "big") % DAYS
    return FIRST_DAY + timedelta(days=day)


def dated_vectors() -> dict[str, np.ndarray]:
    """The committed embeddings of each labelled memory's dated passage text (``date_for``'s date in front)."""
    with np.load(DATED_VECTORS, allow_pickle=False) as data:
        return {str(t): v.astype(np.float32) for t, v in zip(data["texts"], data["vectors"], strict=True)}


def local_classifier(vectors: dict[str, np.ndarray]) -> Callable[[str], Classification]:
    model = load_kind_model()
    return lambda text: classify(text, model=model, vector=vectors[text])


def rules_classifier() -> Callable[[str], Classification]:
    return lambda text: classify(text)


@dataclass
class Scores:
    kinds: list[str]
    total: int = 0  # real memories
    correct: int = 0
    chatter_total: int = 0
    chatter_found: int = 0
    false_chatter: int = 0
    confusion: dict[tuple[str, str], int] = field(default_factory=dict)  # (truth, predicted) → count
    confidences: list[tuple[float, bool]] = field(default_factory=list)
    vectors: str = ""  # which vectors the model read, when that was named

    @property
    def accuracy(self) -> float:
        return self.correct / self.total

    @property
    def chatter_recall(self) -> float:
        return self.chatter_found / self.chatter_total

    @property
    def false_chatter_rate(self) -> float:
        return self.false_chatter / self.total

    def precision(self, kind: str) -> float:
        predicted = sum(n for (_, p), n in self.confusion.items() if p == kind)
        return self.confusion.get((kind, kind), 0) / predicted if predicted else 0.0

    def recall(self, kind: str) -> float:
        actual = sum(n for (t, _), n in self.confusion.items() if t == kind)
        return self.confusion.get((kind, kind), 0) / actual if actual else 0.0

    def reliability(self) -> list[tuple[float, float, int, float, float]]:
        """Per confidence bin [low, high): low, high, count, mean confidence, accuracy."""
        rows = []
        for low, high in itertools.pairwise(BINS):
            inside = [(c, ok) for c, ok in self.confidences if low <= c < high or (high == 1.0 and c == 1.0)]
            if inside:
                rows.append(
                    (
                        low,
                        high,
                        len(inside),
                        float(np.mean([c for c, _ in inside])),
                        float(np.mean([ok for _, ok in inside])),
                    )
                )
        return rows

    def calibration_error(self) -> float:
        """Expected calibration error: the count-weighted gap between mean confidence and accuracy per bin."""
        return sum(n * abs(conf - acc) for _, _, n, conf, acc in self.reliability()) / len(self.confidences)


def score(items: Sequence[Labelled], classifier: Callable[[str], Classification]) -> Scores:
    kinds = sorted({i.label for i in items if i.label != CHATTER})
    scores = Scores(kinds)
    for item in items:
        result = classifier(item.text)
        noise = result.retention == "noise"
        if item.label == CHATTER:
            scores.chatter_total += 1
            scores.chatter_found += noise
            continue
        scores.total += 1
        scores.false_chatter += noise
        right = result.kind == item.label
        scores.correct += right
        scores.confusion[(item.label, result.kind)] = scores.confusion.get((item.label, result.kind), 0) + 1
        scores.confidences.append((result.taxonomy_confidence, right))
    return scores
