"""Maximal marginal relevance: reorder a ranking so near-duplicates do not crowd the top.

Greedy: each next pick maximises λ·relevance − (1 − λ)·(its highest cosine similarity to what was already
picked), relevance being the score scaled to the best one. λ = 1 keeps the ranking as it is. Items without
a vector keep their relevance and are never penalised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from engram.domain.models import RankedItem


def mmr(ranked: Sequence[RankedItem], vectors: Mapping[str, np.ndarray], lam: float, window: int) -> list[RankedItem]:
    """The first ``window`` items reordered by MMR (the rest follow unchanged); demoted items say why."""
    if lam >= 1.0 or len(ranked) < 2:
        return list(ranked)
    head, tail = list(ranked[:window]), list(ranked[window:])
    best = max((r.score for r in head), default=0.0) or 1.0
    unit = {k: v / (np.linalg.norm(v) or 1.0) for k, v in vectors.items()}
    picked: list[RankedItem] = []
    while head:

        def value(r: RankedItem) -> tuple[float, float]:
            sim = _closest(unit.get(str(r.item.id)), [unit.get(str(p.item.id)) for p in picked])
            return lam * (r.score / best) - (1 - lam) * sim, sim

        choice = max(head, key=lambda r: value(r)[0])
        similarity = value(choice)[1]
        position = len(picked)
        if ranked.index(choice) < position and similarity > 0:
            choice.reasons.append(f"diversified (λ {lam:.2f}): {similarity:.2f} similar to a higher result")
        head.remove(choice)
        picked.append(choice)
    return picked + tail


def _closest(vector: np.ndarray | None, others: list[np.ndarray | None]) -> float:
    if vector is None:
        return 0.0
    sims = [float(vector @ o) for o in others if o is not None]
    return max(sims, default=0.0)
