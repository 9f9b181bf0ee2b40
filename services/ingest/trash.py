"""Deleting to the trash, restoring from it, bulk archive/delete, and the sweep that expires items, empties
old trash and prunes old recall logs, published outbox rows and inbox rows. Every change is one transaction: the
item, its snapshot, its audit row and its event."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

import asyncpg

from engram.config import Settings
from engram.db import audit, idempotency, identity, inbox, items, recall_logs, tenants, trash
from engram.db import outbox as outbox_rows
from engram.db.pool import system_tx, tenant_tx
from engram.domain import lifecycle, validation
from engram.domain.models import CallerContext, MemoryItem
from engram.domain.values import (
    LIVE_REVIEW_STATUSES,
    BulkAction,
    EventType,
    ReviewAction,
    ReviewStatus,
    TrashReason,
    listed,
)
from engram.errors import Conflict, EngramError, NotFound, ValidationFailed
from engram.events.envelope import Event
from engram.events.outbox import Outbox
from engram.pipeline import changes
from engram.telemetry.metrics import SWEPT

log = logging.getLogger(__name__)

ARCHIVABLE = LIVE_REVIEW_STATUSES  # what a bulk archive looks at unless a status filter says else
MAX_BULK = 1_000
SWEEP_BATCH = 500
RECALL_LOG_BATCH = 10_000  # recall log rows deleted per tenant per pass (a busy tenant logs thousands a minute)
IDEMPOTENCY_KEY_BATCH = 10_000  # idempotency keys deleted per tenant per pass (one per keyed write)
PRUNE_BATCH = 20_000  # published outbox rows, and inbox rows, deleted per pass (each in its own transaction)


async def discard(
    conn: asyncpg.Connection,
    outbox: Outbox,
    item: MemoryItem,
    *,
    reason: str,
    actor_id: str | None,
    request_id: str = "",
    traceparent: str = "",
    why: str | None = None,
) -> str:
    """Move ``item`` (locked by the caller) to the trash with its audit row and event; return the entry id.
    ``reason`` is ``deleted`` or ``expired``."""
    entry_id = await trash.move(conn, str(item.id), reason, actor_id)
    action = TrashReason(reason)
    await audit.record(
        conn,
        tenant_id=str(item.tenant_id),
        item_id=item.id,
        actor_id=actor_id,
        action=action,
        old_value={"review_status": item.review_status},
        new_value={"trash_id": entry_id},
        reason=why,
        request_id=request_id,
    )
    data: dict[str, str | None] = {
        "item_id": str(item.id),
        "trash_id": entry_id,
        "kind": item.kind,
        "workspace_id": str(item.workspace_id),
    }
    if reason == TrashReason.DELETED:
        data["actor_id"] = actor_id
    else:
        data["expires_at"] = item.expires_at.isoformat() if item.expires_at else None
    await outbox.add(
        conn,
        Event(
            type=(EventType.MEMORY_DELETED if reason == TrashReason.DELETED else EventType.MEMORY_EXPIRED).cloud_type,
            tenant_id=str(item.tenant_id),
            subject=str(item.id),
            traceparent=traceparent,
            data=data,
        ),
    )
    return entry_id


@dataclass
class BulkFilter:
    kinds: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    workspace_id: str = ""
    wing: str = ""
    room: str = ""
    review_statuses: list[str] = field(default_factory=list)
    author_id: str = ""
    created_before: datetime | None = None
    created_after: datetime | None = None

    def is_empty(self) -> bool:
        return not any(
            (
                self.kinds,
                self.tags,
                self.workspace_id,
                self.wing,
                self.room,
                self.review_statuses,
                self.author_id,
                self.created_before,
                self.created_after,
            )
        )


@dataclass
class BulkResult:
    action: str
    dry_run: bool
    matched: int
    affected: list[str]
    skipped: list[tuple[str, str, str]]  # (item id, code, why)
    truncated: bool


class TrashService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self._pool = pool
        self._settings = settings
        self._outbox = Outbox(settings.events_subject_prefix)
        self._changes = changes.Changes(self._outbox)

    async def delete(self, ctx: CallerContext, item_id: str, reason: str) -> str:
        """Move an item to the trash; its author or a reviewer. Returns the trash entry id."""
        validation.require_item_id(item_id)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            item = await items.get(conn, item_id, ctx.principal_id, for_update=True)
            if item is None:
                raise NotFound(f"no item {item_id}")
            lifecycle.may_delete(ctx, str(item.principal_id))
            return await discard(
                conn,
                self._outbox,
                item,
                reason=TrashReason.DELETED,
                actor_id=ctx.principal_id,
                request_id=ctx.request_id,
                traceparent=ctx.traceparent,
                why=reason.strip() or None,
            )

    async def restore(self, ctx: CallerContext, entry_id: str) -> MemoryItem:
        """Bring an item back from the trash as it was (an invalidated item stays invalidated; an expired one
        comes back without its expiry, since restoring it says it is still wanted)."""
        validation.require_uuid(entry_id, "trash_id")
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            entry = await trash.get(conn, entry_id, ctx.principal_id, for_update=True)
            if entry is None:
                raise NotFound(f"no trash entry {entry_id}")
            lifecycle.may_restore(ctx, entry.principal_id, entry.deleted_by)
            item, counts = await trash.restore(conn, entry_id, clear_expiry=entry.reason == TrashReason.EXPIRED)
            await audit.record(
                conn,
                tenant_id=ctx.tenant_id,
                item_id=item.id,
                actor_id=ctx.principal_id,
                action="restored",
                old_value={"trash_id": entry_id},
                new_value={"review_status": item.review_status, **counts},
                request_id=ctx.request_id,
            )
            await self._outbox.add(
                conn,
                Event(
                    type=EventType.MEMORY_RESTORED.cloud_type,
                    tenant_id=ctx.tenant_id,
                    subject=str(item.id),
                    traceparent=ctx.traceparent,
                    data={
                        "item_id": str(item.id),
                        "trash_id": entry_id,
                        "actor_id": ctx.principal_id,
                        "kind": item.kind,
                        "review_status": item.review_status,
                        "embedded": counts["embeddings"] > 0,
                    },
                ),
            )
        return item

    async def bulk(
        self, ctx: CallerContext, action: str, where: BulkFilter, *, dry_run: bool, limit: int, reason: str
    ) -> BulkResult:
        """Archive or delete every item matching ``where`` that the caller may change, in one transaction;
        ``dry_run`` reports the same answer and writes nothing."""
        if action not in tuple(BulkAction):
            raise ValidationFailed(f"action must be one of {listed(BulkAction)}; got {action!r}", field="action")
        if not 1 <= limit <= MAX_BULK:
            raise ValidationFailed(f"limit must be 1–{MAX_BULK}", field="limit")
        if where.is_empty():
            raise ValidationFailed(
                "filter must name at least one criterion (a bulk change of everything is refused)", field="filter"
            )
        for value, name in ((where.workspace_id, "filter.workspace_id"), (where.author_id, "filter.author_id")):
            if value:
                validation.require_uuid(value, name)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            statuses = where.review_statuses or (list(ARCHIVABLE) if action == BulkAction.ARCHIVE else [])
            matched = await items.matching(
                conn,
                ctx.principal_id,
                limit + 1,
                kinds=where.kinds,
                tags=where.tags,
                workspace_id=where.workspace_id or None,
                wing=where.wing or None,
                room=where.room or None,
                review_statuses=statuses,
                author_id=where.author_id or None,
                created_before=where.created_before,
                created_after=where.created_after,
            )
            truncated = len(matched) > limit
            matched = matched[:limit]
            affected: list[str] = []
            skipped: list[tuple[str, str, str]] = []
            for item in matched:
                try:
                    if action == BulkAction.DELETE:
                        lifecycle.may_delete(ctx, str(item.principal_id))
                    else:
                        lifecycle.decide(
                            ctx, item.review_status, ReviewAction.ARCHIVE, str(item.principal_id), writes_here=False
                        )
                        if item.invalidated_at is not None:
                            raise Conflict("invalidated items are kept for audit only", code="invalidated")
                except EngramError as exc:
                    skipped.append((str(item.id), exc.code, exc.detail))
                    continue
                affected.append(str(item.id))
                if dry_run:
                    continue
                if action == BulkAction.DELETE:
                    await discard(
                        conn,
                        self._outbox,
                        item,
                        reason=TrashReason.DELETED,
                        actor_id=ctx.principal_id,
                        request_id=ctx.request_id,
                        traceparent=ctx.traceparent,
                        why=reason or None,
                    )
                else:
                    actor = changes.Actor(
                        ctx.tenant_id, ctx.principal_id, request_id=ctx.request_id, traceparent=ctx.traceparent
                    )
                    await self._changes.change_status(
                        conn, actor, item, ReviewStatus.ARCHIVED, ReviewAction.ARCHIVE, reason or None
                    )
                    await self._changes.settle_conflicts_of(
                        conn, actor, str(item.id), reason or "the other side was archived"
                    )
        return BulkResult(action, dry_run, len(matched), affected, skipped, truncated)


@dataclass
class SweepReport:
    expired: int = 0
    purged: int = 0
    recall_logs: int = 0
    idempotency_keys: int = 0
    outbox: int = 0
    inbox: int = 0


async def sweep(
    pool: asyncpg.Pool, settings: Settings, *, batch: int = SWEEP_BATCH, prune_batch: int = PRUNE_BATCH
) -> SweepReport:
    """One pass over every tenant: expired items go to the trash (``memory.expired``), trash older than the
    tenant's retention is emptied, recall log rows older than ``recall_log_retention_days`` and idempotency keys
    older than ``idempotency_ttl_hours`` are deleted. Bounded per tenant; replicas running it at once skip each
    other's rows. Then, across tenants, at most ``prune_batch`` outbox rows published more than
    ``outbox_retention_hours`` ago and as many inbox rows older than ``inbox_retention_days`` are deleted."""
    report = SweepReport()
    outbox = Outbox(settings.events_subject_prefix)
    async with system_tx(pool) as conn:
        tenant_ids = await tenants.ids(conn)
    for tenant_id in tenant_ids:
        async with tenant_tx(pool, tenant_id) as conn:
            for item in await trash.expired_items(conn, batch):
                await discard(conn, outbox, item, reason=TrashReason.EXPIRED, actor_id=None, why="time to live ended")
                report.expired += 1
            retention = await identity.config_value(conn, "trash_retention_days") or settings.trash_retention_days
            report.purged += await trash.purge(conn, int(retention), batch)
            report.recall_logs += await recall_logs.prune(conn, settings.recall_log_retention_days, RECALL_LOG_BATCH)
            report.idempotency_keys += await idempotency.prune(
                conn, settings.idempotency_ttl_hours, IDEMPOTENCY_KEY_BATCH
            )
    async with system_tx(pool) as conn:
        report.outbox = await outbox_rows.prune_sent(conn, settings.outbox_retention_hours, prune_batch)
    async with system_tx(pool) as conn:
        report.inbox = await inbox.prune(conn, settings.inbox_retention_days, prune_batch)
    SWEPT.labels("expired").inc(report.expired)
    SWEPT.labels("purged").inc(report.purged)
    SWEPT.labels("recall_logs").inc(report.recall_logs)
    SWEPT.labels("idempotency_keys").inc(report.idempotency_keys)
    SWEPT.labels("outbox").inc(report.outbox)
    SWEPT.labels("inbox").inc(report.inbox)
    if (
        report.expired
        or report.purged
        or report.recall_logs
        or report.idempotency_keys
        or report.outbox
        or report.inbox
    ):
        log.info(
            "sweep: %d items expired to the trash, %d trash entries emptied, %d recall log rows, %d idempotency "
            "keys, %d published outbox rows and %d inbox rows deleted",
            report.expired,
            report.purged,
            report.recall_logs,
            report.idempotency_keys,
            report.outbox,
            report.inbox,
        )
    return report
