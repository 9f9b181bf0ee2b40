"""Recall scoring rules: the startup working-set score, trust weighting and hybrid fusion."""

from __future__ import annotations

import math
from datetime import datetime

from engram.domain.models import MemoryItem

SCORING_VERSION = "v2-feedback-penalty"
RECENCY_HALF_LIFE_DAYS = 30.0
PROPOSED_FACTOR = 0.85
CONFLICT_FACTOR = 0.75
DENSE_WEIGHT = 0.5


def recency(created_at: datetime, now: datetime) -> float:
    """1.0 now, 0.5 after one half-life."""
    age_days = max((now - created_at).total_seconds(), 0.0) / 86_400
    return math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def startup_score(item: MemoryItem, now: datetime) -> float:
    """0.30·importance + 0.25·source_trust + 0.20·memory_confidence + 0.15·recency + 0.10·human_verified."""
    return (
        0.30 * item.importance
        + 0.25 * item.source_trust
        + 0.20 * item.memory_confidence
        + 0.15 * recency(item.created_at, now)
        + 0.10 * (1.0 if item.human_verified else 0.0)
    )


FREE_RECALLS = 5
PENALTY_PER_RECALL = 0.03
MIN_FEEDBACK_FACTOR = 0.55


def feedback_factor(recalls_since_useful: int) -> float:
    """The anti-feedback penalty of the startup score: an item served again and again with no useful verdict
    slowly gives way. The first five recalls are free; each further one costs 3%, down to ×0.55; a useful
    verdict resets the count."""
    extra = max(recalls_since_useful - FREE_RECALLS, 0)
    return max(MIN_FEEDBACK_FACTOR, 1.0 - PENALTY_PER_RECALL * extra)


def trust_score(item: MemoryItem, *, in_open_conflict: bool = False) -> float:
    """How much to believe an item, up to 1.0, so relevance still leads: similarity × trust. Proposals ×0.85,
    items in an unresolved conflict ×0.75."""
    base = 0.6 * item.source_trust + 0.4 * item.memory_confidence
    if item.human_verified:
        base = min(1.0, base + 0.2)
    score = 0.5 + 0.5 * base
    if item.review_status == "proposed":
        score *= PROPOSED_FACTOR
    if in_open_conflict:
        score *= CONFLICT_FACTOR
    return score


def min_max(values: dict[str, float]) -> dict[str, float]:
    """Scale to 0–1; a single value (or all equal) maps to 1."""
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    if high - low < 1e-12:
        return {key: 1.0 for key in values}
    return {key: (value - low) / (high - low) for key, value in values.items()}


def fuse(keyword: dict[str, float], dense: dict[str, float], dense_weight: float = DENSE_WEIGHT) -> dict[str, float]:
    """Min-max normalised weighted sum; an item missing from one list scores 0 there."""
    k, d = min_max(keyword), min_max(dense)
    return {key: (1 - dense_weight) * k.get(key, 0.0) + dense_weight * d.get(key, 0.0) for key in k.keys() | d.keys()}
