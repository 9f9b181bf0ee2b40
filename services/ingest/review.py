"""Review transitions and human verification: one locked read, the rule from engram.domain.lifecycle, the
change, its audit row and its event, in one transaction."""

from __future__ import annotations

import asyncpg

from engram.config import Settings
from engram.db import conflicts, items, kinds, outbox
from engram.db.pool import tenant_tx
from engram.domain import lifecycle, validation
from engram.domain.models import CallerContext, MemoryItem
from engram.errors import Conflict, NotFound, ValidationFailed
from engram.events.envelope import Event

MAX_REASON = 2_000


class ReviewService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self._pool = pool
        self._settings = settings

    async def review(self, ctx: CallerContext, item_id: str, action: str, reason: str) -> MemoryItem:
        reason = _reason(reason)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            item = await _visible_for_update(conn, ctx, item_id)
            _not_invalidated(item)
            transition = lifecycle.decide(ctx, item.review_status, action, str(item.principal_id))
            try:
                async with conn.transaction():  # a savepoint: a duplicate coming back to life is refused cleanly
                    changed = await items.set_review_status(conn, item_id, transition.to_state)
            except asyncpg.UniqueViolationError as exc:
                raise Conflict("a live item with the same content exists; archive or supersede it first",
                               code="duplicate_live_item") from exc
            await items.add_event(
                conn, tenant_id=ctx.tenant_id, item_id=item.id, actor_id=ctx.principal_id, action=f"review.{action}",
                old_value={"review_status": item.review_status}, new_value={"review_status": changed.review_status},
                reason=reason or None, request_id=ctx.request_id)
            await outbox.add(conn, Event(
                type="engram.memory.review_changed", tenant_id=ctx.tenant_id, subject=str(item.id),
                traceparent=ctx.traceparent,
                data={"item_id": str(item.id), "action": action, "from": item.review_status,
                      "to": changed.review_status, "actor_id": ctx.principal_id, "kind": item.kind},
            ), self._settings.events_subject_prefix)
            if changed.review_status == "active":
                changed = await self._take_singleton_slot(conn, ctx, changed, reason)
            elif changed.review_status in ("rejected", "archived"):
                for resolved in await conflicts.resolve_open(conn, item_id, "keep_existing", ctx.principal_id,
                                                             reason or f"the other side was {changed.review_status}"):
                    await self._conflict_resolved(ctx, conn, resolved, "keep_existing")
        return changed

    async def _take_singleton_slot(self, conn: asyncpg.Connection, ctx: CallerContext, item: MemoryItem,
                                   reason: str) -> MemoryItem:
        """An activated item of a singleton kind takes its (workspace, subject, kind) slot: the holder is
        superseded, whatever its authority. This is the reviewer's explicit acceptance that a lower-authority
        write may never give itself; any open conflict between the two is resolved as ``accept_new``."""
        kind = await kinds.get_kind(conn, item.kind)
        if kind is None or not kind.singleton or not item.subject:
            return item
        holder = await items.live_singleton(conn, str(item.workspace_id), item.subject, item.kind, ctx.principal_id,
                                            exclude=str(item.id))
        if holder is None:
            return item
        await items.supersede(conn, str(holder.id), str(item.id), ctx.principal_id)
        await items.add_event(
            conn, tenant_id=ctx.tenant_id, item_id=holder.id, actor_id=ctx.principal_id, action="superseded",
            old_value={"review_status": holder.review_status},
            new_value={"review_status": "superseded", "superseded_by": str(item.id)},
            reason=reason or "a reviewer accepted the replacement", request_id=ctx.request_id)
        await outbox.add(conn, Event(
            type="engram.memory.superseded", tenant_id=ctx.tenant_id, subject=str(holder.id),
            traceparent=ctx.traceparent,
            data={"item_id": str(holder.id), "superseded_by": str(item.id), "actor_id": ctx.principal_id,
                  "kind": holder.kind, "authority": item.authority, "accepted_by_review": True},
        ), self._settings.events_subject_prefix)
        for resolved in await conflicts.resolve_open(conn, str(item.id), "accept_new", ctx.principal_id,
                                                     reason or "activated by a reviewer", other=str(holder.id)):
            await self._conflict_resolved(ctx, conn, resolved, "accept_new")
        return item

    async def _conflict_resolved(self, ctx: CallerContext, conn: asyncpg.Connection, resolved: conflicts.Resolved,
                                 resolution: str) -> None:
        await outbox.add(conn, Event(
            type="engram.conflict.resolved", tenant_id=ctx.tenant_id, subject=resolved.id,
            traceparent=ctx.traceparent,
            data={"conflict_id": resolved.id, "item_a": resolved.item_a, "item_b": resolved.item_b,
                  "type": resolved.type, "resolution": resolution, "resolver_id": ctx.principal_id},
        ), self._settings.events_subject_prefix)

    async def verify(self, ctx: CallerContext, item_id: str, reason: str) -> MemoryItem:
        reason = _reason(reason)
        lifecycle.may_verify(ctx)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            item = await _visible_for_update(conn, ctx, item_id)
            _not_invalidated(item)
            if item.human_verified:
                return item
            changed = await items.set_verified(conn, item_id, ctx.principal_id)
            await items.add_event(
                conn, tenant_id=ctx.tenant_id, item_id=item.id, actor_id=ctx.principal_id, action="verified",
                old_value={"human_verified": False}, new_value={"human_verified": True}, reason=reason or None,
                request_id=ctx.request_id)
            await outbox.add(conn, Event(
                type="engram.memory.verified", tenant_id=ctx.tenant_id, subject=str(item.id),
                traceparent=ctx.traceparent, data={"item_id": str(item.id), "actor_id": ctx.principal_id},
            ), self._settings.events_subject_prefix)
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
            await items.add_event(
                conn, tenant_id=ctx.tenant_id, item_id=item.id, actor_id=ctx.principal_id, action="invalidated",
                old_value={"invalidated": False}, new_value={"invalidated": True}, reason=reason,
                request_id=ctx.request_id)
            await outbox.add(conn, Event(
                type="engram.memory.invalidated", tenant_id=ctx.tenant_id, subject=str(item.id),
                traceparent=ctx.traceparent,
                data={"item_id": str(item.id), "actor_id": ctx.principal_id, "kind": item.kind},
            ), self._settings.events_subject_prefix)
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
