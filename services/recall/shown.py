"""Items as the caller is shown them (``engram.domain.disclosure``): the successor only when the caller may read
it, the recall count only for the item's author, its workspace's writers and tenant administrators."""

from __future__ import annotations

import asyncpg

from engram.db import items
from engram.domain import disclosure
from engram.domain.models import CallerContext, MemoryItem


async def items_shown(conn: asyncpg.Connection, ctx: CallerContext, found: list[MemoryItem]) -> list[MemoryItem]:
    successors = await items.readable_ids(
        conn, [str(i.superseded_by) for i in found if i.superseded_by], ctx.principal_id
    )
    # the caller's workspace roles, only when one decides whether it sees a recall count
    roles = await items.roles(conn, ctx.principal_id) if any(disclosure.needs_role(ctx, i) for i in found) else {}
    return [
        disclosure.item_shown(
            item,
            successor_readable=str(item.superseded_by) in successors,
            sees_count=disclosure.sees_recall_count(ctx, item, roles.get(str(item.workspace_id))),
        )
        for item in found
    ]
