"""Promotion on the events that can unblock a proposal: it was classified, a conflict was resolved, it got
feedback, or its review status moved back to proposed. Each named item is decided in the transaction of the
event's inbox row, so a redelivered event decides nothing twice; the events of one tenant in a batch share that
transaction, replayed one event per transaction if it fails (``engram.pipeline.batches``)."""

from __future__ import annotations

import asyncpg

from engram.config import Settings
from engram.domain.values import EventType
from engram.events.durables import DURABLES
from engram.events.envelope import Event
from engram.events.outbox import Outbox
from engram.pipeline import changes, promotion
from engram.pipeline.batches import Writes, apply_per_tenant

TRIGGERS = DURABLES["promotion"]  # (durable consumer, event) pairs
CONSUMER = "promotion"


def items_named(event: Event) -> list[str]:
    """The items an event may have unblocked (none for promotion's own changes, or reviews that did not
    leave an item proposed)."""
    if event.type == EventType.CONFLICT_RESOLVED.cloud_type:
        return [str(event.data.get("item_a")), str(event.data.get("item_b"))]
    if event.type == EventType.FEEDBACK_RECORDED.cloud_type:
        return [str(event.data.get("item_id") or event.subject)]
    if event.type == EventType.MEMORY_REVIEW_CHANGED.cloud_type:
        if event.data.get("by") == promotion.BY or event.data.get("to") != "proposed":
            return []
    return [event.subject]


class PromotionService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self._pool = pool
        self._settings = settings
        self._changes = changes.Changes(Outbox(settings.events_subject_prefix))

    async def handle(self, events: list[Event]) -> dict[str, Exception]:
        return await apply_per_tenant(self._pool, CONSUMER, [(event, None) for event in events], self._decide)

    async def _decide(self, conn: asyncpg.Connection, _writes: Writes, event: Event, _: None) -> None:
        for item_id in items_named(event):
            await promotion.promote_if_proposed(
                conn, self._changes, event.tenant_id, item_id, traceparent=event.traceparent
            )
