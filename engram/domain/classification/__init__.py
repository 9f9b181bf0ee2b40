"""Rule-based classification of a memory's content: its kind (``kinds``), whether it is worth keeping
(``retention``), how sensitive it is (``sensitivity``) and where it belongs (``placement``). Pure and
deterministic; every answer carries the ``reasons`` that produced it. Both confidences are always clamped to
[0, 0.95]: rules are never certain.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from engram.domain.classification.kinds import DEFAULT_KIND_CONFIDENCE, classify_kind
from engram.domain.classification.placement import PlacementRule, parse_placement_rules, place
from engram.domain.classification.retention import classify_retention, is_chatter
from engram.domain.classification.sensitivity import classify_sensitivity
from engram.domain.validation import validate_choice
from engram.domain.values import Sensitivity, Visibility

__all__ = [
    "DEFAULT_KIND_CONFIDENCE",
    "MAX_CONFIDENCE",
    "Classification",
    "PlacementRule",
    "clamp_confidence",
    "classify",
    "is_chatter",
    "narrow_visibility",
    "parse_placement_rules",
]

MAX_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Classification:
    kind: str
    taxonomy_confidence: float
    retention: str
    retention_confidence: float
    sensitivity: str
    wing: str | None
    room: str | None
    suggested_visibility: str | None
    reasons: tuple[str, ...]
    classifier: str = "rules"


def clamp_confidence(x: float) -> float:
    """Into [0, 0.95]; NaN counts as no confidence."""
    if math.isnan(x):
        return 0.0
    return min(max(x, 0.0), MAX_CONFIDENCE)


def narrow_visibility(current: str, suggested: str | None) -> str:
    """The narrower of the two (private < workspace < tenant < public): a suggestion never widens."""
    validate_choice(current, Visibility, "visibility")
    if suggested is None:
        return current
    validate_choice(suggested, Visibility, "suggested_visibility")
    order = list(Visibility)  # narrowest first
    return min(current, suggested, key=lambda v: order.index(Visibility(v)))


def classify(content: str, placement_rules: Sequence[PlacementRule] = ()) -> Classification:
    text = content.replace("\u2019", "'").replace("\u2018", "'")
    noise = is_chatter(text)
    kind, kind_confidence, kind_reasons = classify_kind(text, noise=noise)
    cued = kind_reasons[0].startswith("kind cue")
    retention, retention_confidence, retention_reasons = classify_retention(text, noise=noise, kind_cued=cued)
    sensitivity, sensitivity_reasons = classify_sensitivity(text)
    rule, placement_reasons = place(text, placement_rules)
    return Classification(
        kind=kind,
        taxonomy_confidence=clamp_confidence(kind_confidence),
        retention=retention,
        retention_confidence=clamp_confidence(retention_confidence),
        sensitivity=sensitivity,
        wing=rule.wing if rule else None,
        room=rule.room if rule else None,
        suggested_visibility=Visibility.PRIVATE if sensitivity != Sensitivity.NORMAL else None,
        reasons=tuple(kind_reasons + retention_reasons + sensitivity_reasons + placement_reasons),
    )
