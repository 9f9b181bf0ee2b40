"""Reads of one item the caller may see: the item, its processing status, its audit trail, its links, and
whether it is ready for promotion. Other memories they mention are named only when the caller may read them."""

from __future__ import annotations

import asyncpg

from engram.db import audit, clock, edges, items, stages, trash
from engram.db.pool import tenant_tx
from engram.domain import disclosure, validation
from engram.domain.models import CallerContext, Edge, ItemEvent, MemoryItem, Stage
from engram.errors import NotFound
from engram.pipeline import promotion
from services.recall.shown import items_shown


class ItemReads:
    """``GetItem``, ``GetStatus``, ``GetEvents``, ``ListEdges`` and ``PromotionReadiness``. An item the caller
    may not read, or an id that is not a UUID, is ``NotFound`` like a missing one."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def get_item(self, ctx: CallerContext, item_id: str) -> MemoryItem:
        validation.require_item_id(item_id)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            item = await items.get(conn, item_id, ctx.principal_id)
            if item is None:
                raise NotFound(f"no item {item_id}")
            [shown] = await items_shown(conn, ctx, [item])
        return shown

    async def get_status(self, ctx: CallerContext, item_id: str) -> tuple[MemoryItem, list[Stage]]:
        validation.require_item_id(item_id)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            item = await items.get(conn, item_id, ctx.principal_id)
            if item is None:
                raise NotFound(f"no item {item_id}")
            found = await stages.of_item(conn, item_id)
            readable = await items.readable_ids(
                conn, disclosure.mentioned_ids(s.detail for s in found), ctx.principal_id
            )
        return item, [disclosure.stage_shown(s, readable) for s in found]

    async def get_events(self, ctx: CallerContext, item_id: str) -> list[ItemEvent]:
        """The audit trail of an item the caller may read; the ids of other memories it may not read are null."""
        validation.require_item_id(item_id)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            if await items.get(conn, item_id, ctx.principal_id) is None and not await trash.holds(
                conn, item_id, ctx.principal_id
            ):  # the trail outlives the item
                raise NotFound(f"no item {item_id}")
            trail = await audit.trail(conn, item_id)
            readable = await items.readable_ids(
                conn, {i for e in trail for i in disclosure.event_ids(e)}, ctx.principal_id
            )
        return [disclosure.event_shown(e, readable) for e in trail]

    async def promotion_readiness(
        self, ctx: CallerContext, item_id: str
    ) -> tuple[MemoryItem, list[tuple[str, str]], dict[str, object]]:
        """The item, the promotion gates it fails now (empty: ready), and the tenant's gates."""
        validation.require_item_id(item_id)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            item = await items.get(conn, item_id, ctx.principal_id)
            if item is None or str(item.tenant_id) != ctx.tenant_id:
                raise NotFound(f"no item {item_id}")
            gates = await promotion.gates(conn)
            blockers = await promotion.evaluate(conn, item, gates, await clock.now(conn), viewer=ctx.principal_id)
            [shown] = await items_shown(conn, ctx, [item])
        return shown, blockers, gates.as_dict()

    async def list_edges(self, ctx: CallerContext, item_id: str) -> list[Edge]:
        validation.require_item_id(item_id)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            if await items.get(conn, item_id, ctx.principal_id) is None:
                raise NotFound(f"no item {item_id}")
            return await edges.of_item(conn, item_id, ctx.principal_id)
