"""The kind of a memory from its embedding and the rules' features, without a language model.

A linear (softmax) model over ``[(vector - center) * scale, features(text)]`` gives a probability to each label:
the built-in kinds and ``chatter`` (a message that is no memory). Its weights, center, scale and temperature are
fitted by ``bench/kind_model.py`` on the tuning part of ``bench/data/kinds`` and shipped as package data; the
temperature was chosen so that a confidence of 0.8 is right about 80% of the time on held-out examples.

The answer is explained: the most probable kinds with their probabilities, the labelled examples nearest to the
text (cosine similarity of the embeddings) and the kind cues that fired. Pure: the vector is passed in.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from engram.domain.classification.features import FEATURE_NAMES, features

CHATTER = "chatter"
NEAREST = 3  # examples named in the reasons
EXCERPT = 60  # characters of an example quoted in the reasons


@dataclass(frozen=True)
class KindModel:
    labels: tuple[str, ...]  # the kinds and "chatter", in the columns' order
    center: np.ndarray  # (d,) subtracted from a vector before scaling
    scale: float
    weights: np.ndarray  # (d + len(FEATURE_NAMES), len(labels))
    bias: np.ndarray  # (len(labels),)
    temperature: float
    example_texts: tuple[str, ...]
    example_labels: tuple[str, ...]
    example_vectors: np.ndarray  # (n, d) unit rows

    def __post_init__(self) -> None:
        dimensions = self.center.shape[0]
        if self.weights.shape != (dimensions + len(FEATURE_NAMES), len(self.labels)):
            raise ValueError(f"kind model weights {self.weights.shape} do not fit {dimensions} dimensions")
        if self.example_vectors.shape != (len(self.example_texts), dimensions):
            raise ValueError("kind model examples and their vectors differ in number or dimensions")

    @property
    def dimensions(self) -> int:
        return int(self.center.shape[0])


@dataclass(frozen=True)
class KindGuess:
    kind: str
    confidence: float  # the kind's probability among the candidate kinds
    chatter: bool
    chatter_probability: float
    reasons: tuple[str, ...]


def probabilities(model: KindModel, text: str, vector: np.ndarray) -> np.ndarray:
    """The probability of each of ``model.labels`` for ``text`` whose embedding is ``vector``."""
    if vector.shape != (model.dimensions,):
        raise ValueError(f"the vector has shape {vector.shape}; the kind model needs ({model.dimensions},)")
    row = np.concatenate([(vector.astype(np.float32) - model.center) * model.scale, features(text)])
    logits = (row @ model.weights + model.bias) / model.temperature
    exp = np.exp(logits - logits.max())
    return np.asarray(exp / exp.sum(), dtype=np.float64)


def guess(model: KindModel, text: str, vector: np.ndarray, kinds: Collection[str] | None = None) -> KindGuess:
    """The most probable kind among ``kinds`` (all the model's kinds when None or none of them is known), and
    whether the message is chatter (``chatter`` is the most probable label of all)."""
    p = probabilities(model, text, vector)
    by_label = dict(zip(model.labels, (float(x) for x in p), strict=True))
    chatter_p = by_label.pop(CHATTER, 0.0)
    candidates = {k: v for k, v in by_label.items() if kinds is None or k in kinds} or by_label
    total = sum(candidates.values())
    ranked = sorted(candidates.items(), key=lambda kv: (-kv[1], kv[0]))
    kind, top = ranked[0]
    confidence = top / total if total > 0 else 0.0
    chatter = chatter_p > max(by_label.values())
    shown = ", ".join(f"{k} {v / total:.2f}" for k, v in ranked[:3]) if total > 0 else kind
    reasons = [f"kind model: {shown}"]
    if chatter:
        reasons.append(f"kind model: chatter {chatter_p:.2f}")
    reasons.append("nearest examples: " + "; ".join(nearest(model, vector)))
    return KindGuess(kind, confidence, chatter, chatter_p, tuple(reasons))


def nearest(model: KindModel, vector: np.ndarray, count: int = NEAREST) -> list[str]:
    """The ``count`` labelled examples most similar to ``vector``: "'<excerpt>' (<label> <similarity>)"."""
    similarities = model.example_vectors.astype(np.float32) @ vector.astype(np.float32)
    order = sorted(range(len(similarities)), key=lambda i: (-float(similarities[i]), i))[:count]
    return [f"'{_excerpt(model.example_texts[i])}' ({model.example_labels[i]} {similarities[i]:.2f})" for i in order]


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT else flat[: EXCERPT - 1] + "…"
