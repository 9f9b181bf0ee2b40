"""The nearest labelled changes: two columns of the learned judge read from the direction a pair's meaning moves.

A pair's *direction* is its new text's passage vector less its existing text's (both of unit length, the
difference made unit length): which way the memory changed in e5 space. ``learned_references.npz`` (package
data, built by ``bench/contradiction_model.py --references``) holds the direction of every labelled pair of
bench/data/conflicts (batches 1-12) as float16, with its label, id and batch, and the embedding profile the
vectors came from. For a new pair, among the ``K`` references whose direction is most alike (cosine; ties by
their order in the file), ``share`` is the share that are contradictions and ``margin`` the best cosine to a
contradiction less the best to a compatible pair (docs/benchmarks.md, "knntext").

Only vectors of ``PROFILE`` can be compared with the references; without two usable vectors there is no
direction (``direction`` is None) and the judge reads the columns at their fitted means (``learned.py``). Pure:
no I/O but reading the references once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

REFERENCES_PATH = Path(__file__).with_name("learned_references.npz")
PROFILE = "multilingual-e5-small:384"  # the vectors of bench/data/conflicts/vectors.npz
K = 10
COLUMNS = ("neighbours_contradicting", "neighbours_margin")
NAMED = 3  # nearest references named in an explanation


@dataclass(frozen=True)
class References:
    """Labelled directions: ``directions`` (n, d) float32 of unit length, ``contradiction`` (n,) bool, their ids
    and batches."""

    directions: np.ndarray
    contradiction: np.ndarray
    ids: np.ndarray
    batches: np.ndarray
    profile: str = PROFILE

    def subset(self, keep: np.ndarray) -> References:
        return References(self.directions[keep], self.contradiction[keep], self.ids[keep], self.batches[keep],
                          self.profile)  # fmt: skip


@dataclass(frozen=True)
class Nearest:
    share: float  # of the K nearest, the share that are contradictions
    margin: float  # best cosine to a contradiction less the best to a compatible pair
    ids: tuple[str, ...]  # the K nearest, nearest first
    contradictions: int  # how many of them are contradictions

    @property
    def row(self) -> list[float]:
        return [self.share, self.margin]

    def describe(self) -> str:
        return (f"nearest labelled changes: {self.contradictions} of {len(self.ids)} contradictions "
                f"({', '.join(self.ids[:NAMED])})")  # fmt: skip


def unit(v: np.ndarray) -> np.ndarray | None:
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 1e-12 and np.isfinite(norm) else None


def direction(existing: np.ndarray | None, new: np.ndarray | None) -> np.ndarray | None:
    """The unit direction from ``existing``'s vector to ``new``'s (each made unit length first), or None when
    either is missing, empty, of another size than the other, or the two are the same."""
    if existing is None or new is None:
        return None
    a, b = np.asarray(existing, dtype=np.float64).ravel(), np.asarray(new, dtype=np.float64).ravel()
    if a.shape != b.shape or not a.size:
        return None
    ua, ub = unit(a), unit(b)
    return None if ua is None or ub is None else unit(ub - ua)


def nearest(towards: np.ndarray, references: References, exclude: np.ndarray | None = None, k: int = K) -> Nearest:
    """The ``k`` references whose direction is most like ``towards`` (``exclude``: references never counted)."""
    # einsum, not the BLAS product: OpenBLAS's threads for one (1,384 × 384) product cost a pair ~1 ms more CPU
    similar = np.einsum("ij,j->i", references.directions, towards.astype(np.float32))
    if exclude is not None:
        similar = np.where(exclude, -np.inf, similar)
    top = [i for i in np.argsort(-similar, kind="stable")[:k] if np.isfinite(similar[i])]
    positive = references.contradiction
    best_pos = np.max(similar[positive], initial=-1.0)
    best_neg = np.max(similar[~positive], initial=-1.0)
    best_pos, best_neg = (float(x) if np.isfinite(x) else -1.0 for x in (best_pos, best_neg))
    hits = int(positive[top].sum())
    return Nearest(hits / max(len(top), 1), best_pos - best_neg, tuple(str(i) for i in references.ids[top]), hits)


def build(
    directions: np.ndarray, contradiction: np.ndarray, ids: list[str], batches: list[str]
) -> dict[str, np.ndarray]:
    """The arrays of ``learned_references.npz`` (float16 directions), in the order given."""
    return {
        "directions": np.asarray(directions, dtype=np.float16),
        "contradiction": np.asarray(contradiction, dtype=bool),
        "ids": np.asarray(ids, dtype=str),
        "batches": np.asarray(batches, dtype=str),
        "profile": np.asarray(PROFILE),
    }


def from_arrays(data: dict[str, np.ndarray] | np.lib.npyio.NpzFile) -> References:
    return References(
        np.asarray(data["directions"], dtype=np.float32),
        np.asarray(data["contradiction"], dtype=bool),
        np.asarray(data["ids"], dtype=str),
        np.asarray(data["batches"], dtype=str),
        str(data["profile"]),
    )


@lru_cache(maxsize=1)
def shipped() -> References:
    """The references shipped with the package (read once)."""
    with np.load(REFERENCES_PATH, allow_pickle=False) as data:
        return from_arrays(data)
