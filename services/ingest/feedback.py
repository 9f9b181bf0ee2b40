"""Feedback: one current verdict per principal and item (history kept), a daily allowance per principal,
and the effect on the item — importance up a little for useful (and the anti-feedback counter reset), down
for noise."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from engram.config import Settings
from engram.db import audit, items
from engram.db import feedback as verdicts
from engram.db.pool import tenant_tx
from engram.domain import feedback, validation
from engram.domain.models import CallerContext
from engram.domain.values import EventType
from engram.errors import Conflict, NotFound, RateLimited, ValidationFailed
from engram.events.envelope import Event
from engram.events.outbox import Outbox
from engram.telemetry.metrics import FEEDBACK


@dataclass(frozen=True)
class FeedbackResult:
    item_id: str
    verdict: str
    previous: str | None
    importance: float


class FeedbackService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self._pool = pool
        self._settings = settings
        self._outbox = Outbox(settings.events_subject_prefix)

    async def record(self, ctx: CallerContext, item_id: str, verdict: str, recall_id: str) -> FeedbackResult:
        if verdict not in feedback.VERDICTS:
            raise ValidationFailed(
                f"verdict must be one of {', '.join(feedback.VERDICTS)}; got {verdict!r}", field="verdict"
            )
        validation.require_uuid(item_id, "item_id")
        if recall_id:
            validation.require_uuid(recall_id, "recall_id")
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            item = await items.get(conn, item_id, ctx.principal_id, for_update=True)
            if item is None:
                raise NotFound(f"no item {item_id}", field="item_id")
            if item.invalidated_at is not None:
                raise Conflict(f"item {item_id} is invalidated; it is kept for audit only", code="invalidated")
            current_importance = round(item.importance, 4)  # stored as real: drop float noise
            previous = await verdicts.latest_verdict(conn, item_id, ctx.principal_id)
            if previous == verdict:  # the current verdict again: nothing is recorded or counted, but a useful
                if verdict == "useful":  # item that was served since still restarts the anti-feedback count
                    await verdicts.reset_recalls_since_useful(conn, item_id)
                return FeedbackResult(item_id, verdict, previous, current_importance)
            await _within_daily_allowance(conn, ctx.principal_id)
            importance = feedback.adjusted_importance(current_importance, verdict, previous)
            await verdicts.record(
                conn,
                tenant_id=ctx.tenant_id,
                item_id=item_id,
                principal_id=ctx.principal_id,
                verdict=verdict,
                recall_id=recall_id or None,
                importance_before=current_importance,
                importance_after=importance,
            )
            await audit.record(
                conn,
                tenant_id=ctx.tenant_id,
                item_id=item.id,
                actor_id=ctx.principal_id,
                action=f"feedback.{verdict}",
                old_value={"importance": current_importance, "verdict": previous},
                new_value={"importance": importance, "verdict": verdict},
                request_id=ctx.request_id,
            )
            await self._outbox.add(
                conn,
                Event(
                    type=EventType.FEEDBACK_RECORDED.cloud_type,
                    tenant_id=ctx.tenant_id,
                    subject=item_id,
                    traceparent=ctx.traceparent,
                    data={
                        "item_id": item_id,
                        "principal_id": ctx.principal_id,
                        "verdict": verdict,
                        "previous": previous,
                        "recall_id": recall_id or None,
                        "importance": importance,
                    },
                ),
            )
        FEEDBACK.labels(verdict).inc()
        return FeedbackResult(item_id, verdict, previous, importance)


async def _within_daily_allowance(conn: asyncpg.Connection, principal_id: str) -> None:
    limit = await verdicts.daily_limit(conn) or feedback.DEFAULT_DAILY_LIMIT
    given, oldest = await verdicts.given_today(conn, principal_id)
    if given >= limit:
        now = feedback.now()
        wait = feedback.seconds_until_allowance(oldest or now, now)
        raise RateLimited(f"daily feedback limit of {limit} reached", retry_after_s=wait)
