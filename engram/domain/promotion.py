"""Promotion gates: when a proposed memory may become active without a reviewer.

A proposal is promoted when every gate passes: its kind's policy is ``auto`` (kinds that require review are
``manual`` unless the tenant says otherwise), it is old enough, confident enough, classified and not noise,
in no open conflict, never disputed, and its singleton slot is free. The thresholds are tenant configuration
(``promotion``); each failing gate is a blocker with a stable code, and the first one names the skip reason
the counts report (``skipped_<code>``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from engram.domain.models import MemoryItem, MemoryKind
from engram.domain.values import Retention, ReviewStatus
from engram.errors import ValidationFailed

POLICIES = ("auto", "manual")
BLOCKER_CODES = (
    "not_proposed",
    "invalidated",
    "expired",
    "kind_manual",
    "age",
    "unclassified",
    "noise",
    "confidence",
    "conflict",
    "disputed",
    "singleton_slot",
)  # in the order they are checked


@dataclass(frozen=True)
class Gates:
    min_age_minutes: int = 10
    min_memory_confidence: float = 0.6
    min_taxonomy_confidence: float = 0.5
    kinds: dict[str, str] = field(default_factory=dict)  # kind → auto | manual, overriding the default

    def policy(self, kind: MemoryKind) -> str:
        return self.kinds.get(kind.name, "manual" if kind.requires_review else "auto")

    def as_dict(self) -> dict[str, Any]:
        return {
            "min_age_minutes": self.min_age_minutes,
            "min_memory_confidence": self.min_memory_confidence,
            "min_taxonomy_confidence": self.min_taxonomy_confidence,
            "kinds": dict(self.kinds),
        }


def parse_gates(raw: Any) -> Gates:
    """A tenant's ``promotion`` configuration, validated (None: the defaults)."""
    if raw is None:
        return Gates()
    if not isinstance(raw, dict):
        raise ValidationFailed("promotion must be an object", field="promotion")
    unknown = set(raw) - {"min_age_minutes", "min_memory_confidence", "min_taxonomy_confidence", "kinds"}
    if unknown:
        raise ValidationFailed(f"promotion: unknown setting(s) {', '.join(sorted(unknown))}", field="promotion")
    age = raw.get("min_age_minutes", Gates.min_age_minutes)
    if isinstance(age, bool) or not isinstance(age, int) or not 0 <= age <= 525_600:
        raise ValidationFailed("promotion.min_age_minutes must be 0–525600", field="promotion")
    confidences = {}
    for name in ("min_memory_confidence", "min_taxonomy_confidence"):
        value = raw.get(name, getattr(Gates, name))
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ValidationFailed(f"promotion.{name} must be 0–1", field="promotion")
        confidences[name] = float(value)
    kinds = raw.get("kinds", {})
    if not isinstance(kinds, dict) or any(v not in POLICIES for v in kinds.values()):
        raise ValidationFailed("promotion.kinds maps a kind to auto or manual", field="promotion")
    return Gates(min_age_minutes=age, kinds={str(k): str(v) for k, v in kinds.items()}, **confidences)


@dataclass(frozen=True)
class Facts:
    """What the gates need beyond the item and its kind (read from the database by the caller)."""

    open_conflicts: int = 0
    was_disputed: bool = False
    slot_holder: str | None = None  # the live item holding the singleton slot, when there is one


def blockers(
    item: MemoryItem, kind: MemoryKind | None, gates: Gates, facts: Facts, now: datetime
) -> list[tuple[str, str]]:
    """Every gate the item fails, as (code, detail); empty when it may be promoted."""
    found: list[tuple[str, str]] = []
    if item.review_status != ReviewStatus.PROPOSED:
        found.append(("not_proposed", f"the item is {item.review_status}"))
    if item.invalidated_at is not None:
        found.append(("invalidated", "the item is invalidated"))
    if item.expires_at is not None and item.expires_at <= now:
        found.append(("expired", "the item's time to live has ended"))
    if kind is None or gates.policy(kind) == "manual":
        found.append(("kind_manual", f"kind {item.kind} is promoted by a reviewer only"))
    ready_at = item.created_at + timedelta(minutes=gates.min_age_minutes)
    if now < ready_at:
        found.append(("age", f"younger than {gates.min_age_minutes} min (ready at {ready_at.isoformat()})"))
    if item.classified_at is None:
        found.append(("unclassified", "not classified yet"))
    elif item.retention == Retention.NOISE:
        found.append(("noise", "classified as noise"))
    if item.memory_confidence < gates.min_memory_confidence:
        found.append(
            ("confidence", f"memory confidence {item.memory_confidence:.2f} < {gates.min_memory_confidence:.2f}")
        )
    if (
        item.classified_at is not None
        and item.taxonomy_confidence is not None
        and item.taxonomy_confidence < gates.min_taxonomy_confidence
    ):
        found.append(
            ("confidence", f"taxonomy confidence {item.taxonomy_confidence:.2f} < {gates.min_taxonomy_confidence:.2f}")
        )
    if facts.open_conflicts:
        found.append(("conflict", f"{facts.open_conflicts} open conflict(s)"))
    if facts.was_disputed:
        found.append(("disputed", "it has been disputed"))
    if facts.slot_holder:
        found.append(("singleton_slot", f"{facts.slot_holder} holds the {item.kind} slot for {item.subject!r}"))
    return found
