"""Review transitions and human verification: one locked read, the rule from engram.domain.lifecycle, the
change, its audit row and its event, in one transaction."""

from __future__ import annotations

import asyncpg

from engram.config import Settings
from engram.db import audit, items, kinds
from engram.db.pool import tenant_tx
from engram.domain import lifecycle, validation
from engram.domain.models import CallerContext, MemoryItem
from engram.domain.values import WRITING_ROLES, EventType, ReviewStatus
from engram.errors import Conflict, NotFound, ValidationFailed
from engram.events.envelope import Event
from engram.events.outbox import Outbox
from engram.pipeline import changes

MAX_REASON = 2_000


class ReviewService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self._pool = pool
        self._settings = settings
        self._outbox = Outbox(settings.events_subject_prefix)
        self._changes = changes.Changes(self._outbox)

    async def review(self, ctx: CallerContext, item_id: str, action: str, reason: str) -> MemoryItem:
        reason = _reason(reason)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            item = await _visible_for_update(conn, ctx, item_id)
            _not_invalidated(item)
            role = await items.workspace_role(conn, str(item.workspace_id), ctx.principal_id)
            transition = lifecycle.decide(
                ctx, item.review_status, action, str(item.principal_id), writes_here=role in WRITING_ROLES
            )
            actor = _actor(ctx)
            # a duplicate coming back to life is refused (Conflict, duplicate_live_item)
            changed = await self._changes.change_status(conn, actor, item, transition.to_state, action, reason or None)
            if changed.review_status == ReviewStatus.ACTIVE:
                await self._take_singleton_slot(conn, ctx, changed, reason)
            elif changed.review_status in (ReviewStatus.REJECTED, ReviewStatus.ARCHIVED):
                await self._changes.settle_conflicts_of(
                    conn, actor, item_id, reason or f"the other side was {changed.review_status}"
                )
        return changed

    async def _take_singleton_slot(
        self, conn: asyncpg.Connection, ctx: CallerContext, item: MemoryItem, reason: str
    ) -> None:
        """An activated item of a singleton kind takes its (workspace, subject, kind) slot: the holder is
        superseded, whatever its authority. This is the reviewer's explicit acceptance that a lower-authority
        write may never give itself; any open conflict between the two is resolved as ``accept_new``."""
        kind = await kinds.get_kind(conn, item.kind)
        if kind is None or not kind.singleton or not item.subject:
            return
        holder = await items.live_singleton(
            conn, str(item.workspace_id), item.subject, item.kind, ctx.principal_id, exclude=str(item.id)
        )
        if holder is None:
            return
        actor = _actor(ctx)
        await self._changes.supersede(
            conn, actor, holder, item, reason or "a reviewer accepted the replacement", accepted_by_review=True
        )
        await self._changes.resolve_conflicts(
            conn, actor, str(item.id), "accept_new", reason or "activated by a reviewer", other=str(holder.id)
        )

    async def verify(self, ctx: CallerContext, item_id: str, reason: str) -> MemoryItem:
        reason = _reason(reason)
        lifecycle.may_verify(ctx)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            item = await _visible_for_update(conn, ctx, item_id)
            _not_invalidated(item)
            if item.human_verified:
                return item
            changed = await items.set_verified(conn, item_id, ctx.principal_id)
            await audit.record(
                conn,
                tenant_id=ctx.tenant_id,
                item_id=item.id,
                actor_id=ctx.principal_id,
                action="verified",
                old_value={"human_verified": False},
                new_value={"human_verified": True},
                reason=reason or None,
                request_id=ctx.request_id,
            )
            await self._outbox.add(
                conn,
                Event(
                    type=EventType.MEMORY_VERIFIED.cloud_type,
                    tenant_id=ctx.tenant_id,
                    subject=str(item.id),
                    traceparent=ctx.traceparent,
                    data={"item_id": str(item.id), "actor_id": ctx.principal_id},
                ),
            )
        return changed

    async def invalidate(self, ctx: CallerContext, item_id: str, reason: str) -> MemoryItem:
        """Gone, with nothing replacing it: out of recall, kept for audit. The author or a reviewer."""
        reason = _reason(reason)
        if not reason:
            raise ValidationFailed("say why the memory is no longer true", field="reason")
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            item = await _visible_for_update(conn, ctx, item_id)
            lifecycle.may_invalidate(ctx, str(item.principal_id))
            if item.invalidated_at is not None:
                raise Conflict(f"item {item_id} is already invalidated", code="already_invalidated")
            changed = await items.invalidate(conn, item_id, reason)
            await audit.record(
                conn,
                tenant_id=ctx.tenant_id,
                item_id=item.id,
                actor_id=ctx.principal_id,
                action="invalidated",
                old_value={"invalidated": False},
                new_value={"invalidated": True},
                reason=reason,
                request_id=ctx.request_id,
            )
            await self._outbox.add(
                conn,
                Event(
                    type=EventType.MEMORY_INVALIDATED.cloud_type,
                    tenant_id=ctx.tenant_id,
                    subject=str(item.id),
                    traceparent=ctx.traceparent,
                    data={"item_id": str(item.id), "actor_id": ctx.principal_id, "kind": item.kind},
                ),
            )
        return changed


async def _visible_for_update(conn: asyncpg.Connection, ctx: CallerContext, item_id: str) -> MemoryItem:
    validation.require_item_id(item_id)
    item = await items.get(conn, item_id, ctx.principal_id, for_update=True)
    if item is None:
        raise NotFound(f"no item {item_id}")
    return item


def _not_invalidated(item: MemoryItem) -> None:
    if item.invalidated_at is not None:
        raise Conflict(f"item {item.id} is invalidated; it is kept for audit only", code="invalidated")


def _reason(reason: str) -> str:
    reason = reason.strip()
    if len(reason) > MAX_REASON:
        raise ValidationFailed(f"reason must be at most {MAX_REASON} characters", field="reason")
    return reason


def _actor(ctx: CallerContext) -> changes.Actor:
    return changes.Actor(ctx.tenant_id, ctx.principal_id, request_id=ctx.request_id, traceparent=ctx.traceparent)
