"""Promotion of proposed memories: one implementation for the consumer, the periodic sweep, the CLI
(``engram promote-proposed``), the admin API (``POST /v1/admin/promote``) and the readiness report.

Each item is decided in its own transaction under a row lock, so any number of promoters may run at once;
a dry run takes the same decisions and writes nothing.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import asyncpg

from engram.db import clock, conflicts, identity, items, kinds, promotions, stages, tenants
from engram.db.pool import system_tx, tenant_tx
from engram.domain import promotion
from engram.domain.models import MemoryItem
from engram.domain.values import PipelineStage, ReviewStatus, StageStatus
from engram.events.outbox import Outbox
from engram.pipeline import changes
from engram.telemetry.metrics import PROMOTION_OUTCOMES

BY = "promotion"


async def gates(conn: asyncpg.Connection) -> promotion.Gates:
    return promotion.parse_gates(await identity.config_value(conn, "promotion"))


async def evaluate(
    conn: asyncpg.Connection, item: MemoryItem, rules: promotion.Gates, now: datetime, viewer: str | None = None
) -> list[tuple[str, str]]:
    """The blockers standing between ``item`` and promotion (empty: it may be promoted). With ``viewer``, an
    item the viewer may not read is not named."""
    kind = await kinds.get_kind(conn, item.kind)
    holder = None
    if kind is not None and kind.singleton and item.subject:
        found = await items.slot_holder(conn, str(item.workspace_id), item.subject, item.kind, exclude=str(item.id))
        hidden = viewer is not None and found is not None and await items.get(conn, found, viewer) is None
        holder = "a memory you cannot see" if hidden else found
    facts = promotion.Facts(
        open_conflicts=await conflicts.open_count(conn, str(item.id)),
        was_disputed=await items.was_disputed(conn, str(item.id)),
        slot_holder=holder,
    )
    return promotion.blockers(item, kind, rules, facts, now)


async def promote_item(
    conn: asyncpg.Connection,
    writer: changes.Changes,
    tenant_id: str,
    item_id: str,
    *,
    dry_run: bool,
    traceparent: str = "",
) -> str:
    """Promote one item if every gate passes; returns ``promoted`` or ``skipped_<first blocker>``
    (``skipped_gone`` for an item deleted meanwhile)."""
    item = await items.get(conn, item_id, for_update=not dry_run)
    if item is None:
        return "skipped_gone"
    return await _decide(conn, writer, tenant_id, item, dry_run=dry_run, traceparent=traceparent)


async def promote_if_proposed(
    conn: asyncpg.Connection, writer: changes.Changes, tenant_id: str, item_id: str, *, traceparent: str = ""
) -> None:
    """``promote_item`` for an item an event names: most are not proposed (a memory classified active), and
    those change nothing, so their gates are not evaluated."""
    item = await items.get(conn, item_id, for_update=True)
    if item is not None and item.review_status == ReviewStatus.PROPOSED:
        await _decide(conn, writer, tenant_id, item, dry_run=False, traceparent=traceparent)


async def _decide(
    conn: asyncpg.Connection,
    writer: changes.Changes,
    tenant_id: str,
    item: MemoryItem,
    *,
    dry_run: bool,
    traceparent: str,
) -> str:
    now = await clock.now(conn)
    blockers = await evaluate(conn, item, await gates(conn), now)
    outcome = f"skipped_{blockers[0][0]}" if blockers else "promoted"
    if dry_run or item.review_status != ReviewStatus.PROPOSED:
        return outcome
    PROMOTION_OUTCOMES.labels(outcome).inc()
    if blockers:
        await stages.record(
            conn,
            tenant_id=tenant_id,
            item_id=item.id,
            stage=PipelineStage.PROMOTION,
            status=StageStatus.PENDING,
            detail="; ".join(detail for _, detail in blockers)[:500],
        )
        return outcome
    actor = changes.Actor(tenant_id, by=BY, traceparent=traceparent)
    await writer.change_status(conn, actor, item, "active", "promote", "every promotion gate passed")
    await stages.record(
        conn, tenant_id=tenant_id, item_id=item.id, stage=PipelineStage.PROMOTION, status="done", detail="promoted"
    )
    return outcome


async def promote_proposed(
    pool: asyncpg.Pool, prefix: str, *, tenant_id: str | None = None, limit: int = 100, dry_run: bool = False
) -> Counter[str]:
    """Decide up to ``limit`` proposed items (oldest first) of one tenant, or of every tenant; counts per
    outcome. Changes are announced under the subject ``prefix``."""
    writer = changes.Changes(Outbox(prefix))
    counts: Counter[str] = Counter()
    for tenant in [tenant_id] if tenant_id else await _tenants(pool):
        async with tenant_tx(pool, tenant) as conn:
            ids = await promotions.proposed_after(conn, None, limit - sum(counts.values()))
        for item_id in ids:
            async with tenant_tx(pool, tenant) as conn:
                counts[await promote_item(conn, writer, tenant, item_id, dry_run=dry_run)] += 1
        if sum(counts.values()) >= limit:
            break
    return counts


async def sweep(pool: asyncpg.Pool, prefix: str, batch: int) -> Counter[str]:
    """One bounded pass per tenant, continuing where the last pass stopped (the cursor is kept in the
    database, so a restart or another replica carries on); at the end of the list it starts over."""
    writer = changes.Changes(Outbox(prefix))
    counts: Counter[str] = Counter()
    for tenant in await _tenants(pool):
        async with tenant_tx(pool, tenant) as conn:
            cursor = await promotions.cursor(conn)
            ids = await promotions.proposed_after(conn, cursor, batch)
        for item_id in ids:
            async with tenant_tx(pool, tenant) as conn:
                counts[await promote_item(conn, writer, tenant, item_id, dry_run=False)] += 1
        async with tenant_tx(pool, tenant) as conn:
            await promotions.save_cursor(conn, tenant, ids[-1] if len(ids) == batch else None)
    return counts


async def _tenants(pool: asyncpg.Pool) -> list[str]:
    async with system_tx(pool) as conn:
        return await tenants.ids(conn)
