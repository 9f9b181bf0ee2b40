"""Rule-based classification of a memory's content: its kind (``kinds``), whether it is worth keeping
(``retention``), how sensitive it is (``sensitivity``) and where it belongs (``placement``). Pure and
deterministic; every answer carries the ``reasons`` that produced it. Given a kind model (``kind_model``) and
the content's embedding, the kind and chatter come from that model instead, the cues counting among its
features. Both confidences are always clamped to [0, 0.95]: rules are never certain.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from engram.domain.classification.kind_model import KindModel, guess
from engram.domain.classification.kinds import DEFAULT_KIND_CONFIDENCE, classify_kind
from engram.domain.classification.placement import PlacementRule, parse_placement_rules, place
from engram.domain.classification.retention import classify_retention, is_chatter
from engram.domain.classification.sensitivity import classify_sensitivity
from engram.domain.validation import validate_choice
from engram.domain.values import Sensitivity, Visibility

__all__ = [
    "DEFAULT_KIND_CONFIDENCE",
    "KIND_TEXT_LIMIT",
    "MAX_CONFIDENCE",
    "Classification",
    "KindModel",
    "PlacementRule",
    "clamp_confidence",
    "classify",
    "is_chatter",
    "narrow_visibility",
    "parse_placement_rules",
]

MAX_CONFIDENCE = 0.95
KIND_TEXT_LIMIT = 600  # characters of the content the kind model reads: its embedding and features stay cheap


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


def classify(
    content: str,
    placement_rules: Sequence[PlacementRule] = (),
    *,
    model: KindModel | None = None,
    vector: np.ndarray | None = None,
    kinds: Collection[str] | None = None,
) -> Classification:
    """The rules' classification; with a kind ``model`` and the content's embedding ``vector``, the kind (among
    ``kinds`` when given) and whether it is chatter come from the model, which weighs the rules' cues as features,
    and the cues that fired stay in the reasons."""
    text = content.replace("\u2019", "'").replace("\u2018", "'")
    noise = is_chatter(text)
    kind, kind_confidence, kind_reasons = classify_kind(text, noise=noise)
    cued = kind_reasons[0].startswith("kind cue")
    if model is not None and vector is not None:
        learned = guess(model, text[:KIND_TEXT_LIMIT], vector, kinds)
        cues = kind_reasons if cued else []
        kind, kind_confidence, kind_reasons = learned.kind, learned.confidence, [*learned.reasons, *cues]
        if learned.chatter and not noise:
            retention_reasons = [f"retention: the kind model reads it as chatter ({learned.chatter_probability:.2f})"]
            retention, retention_confidence = "noise", learned.chatter_probability
        else:
            retention, retention_confidence, retention_reasons = classify_retention(text, noise=noise, kind_cued=cued)
    else:
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
