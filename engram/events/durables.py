"""The durable JetStream consumers of the pipeline, by the service that runs them, with the event each takes.

The services subscribe from this table, and ``engram doctor`` and the deployment's lag-based autoscaling
check the same names, so a renamed consumer cannot go unnoticed.
"""

from __future__ import annotations

from engram.domain.values import EventType

DURABLES: dict[str, tuple[tuple[str, EventType], ...]] = {
    "embedder": (
        ("embedder", EventType.MEMORY_CREATED),
        ("embedder_restored", EventType.MEMORY_RESTORED),  # and the items whose predecessor it is again
        # context passages: the items embedded with a memory deleted, expired or made narrower are embedded again
        ("embedder_deleted", EventType.MEMORY_DELETED),
        ("embedder_expired", EventType.MEMORY_EXPIRED),
        ("embedder_updated", EventType.MEMORY_UPDATED),
    ),
    "classifier": (("classifier", EventType.MEMORY_EMBEDDED),),  # memory.created before 2026-12-02
    "conflicts": (("conflicts", EventType.MEMORY_EMBEDDED),),
    "promotion": (
        ("promotion_classified", EventType.MEMORY_CLASSIFIED),
        ("promotion_conflicts", EventType.CONFLICT_RESOLVED),
        ("promotion_feedback", EventType.FEEDBACK_RECORDED),
        ("promotion_review", EventType.MEMORY_REVIEW_CHANGED),
    ),
}


def all_durables() -> list[str]:
    return [durable for pairs in DURABLES.values() for durable, _ in pairs]


def durable_events() -> dict[str, EventType]:
    """Each durable consumer with the event type it takes."""
    return {durable: event for pairs in DURABLES.values() for durable, event in pairs}
