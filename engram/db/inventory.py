"""What one tenant holds, counted for the operator's gauges (no content, no ids: counts and one timestamp)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import asyncpg


@dataclass
class TenantInventory:
    items: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, review_status) -> items
    open_stages: dict[tuple[str, str], int] = field(default_factory=dict)  # (stage, status) -> items, not done
    proposals: int = 0
    oldest_proposal: datetime | None = None


async def count(conn: asyncpg.Connection) -> TenantInventory:
    """The tenant in scope (``tenant_tx``): its stored items by kind and review status (invalidated ones left
    out: they are kept for audit only), its items waiting at or failed in a pipeline stage, and its proposals
    awaiting review with the creation time of the oldest. Each query names the tenant: the policies also
    let a tenant read other tenants' public items."""
    inventory = TenantInventory()
    for row in await conn.fetch(
        "SELECT kind, review_status, count(*) AS n FROM memory_items "
        "WHERE tenant_id = engram_current_tenant() AND invalidated_at IS NULL GROUP BY kind, review_status"
    ):
        inventory.items[(row["kind"], row["review_status"])] = row["n"]
    for row in await conn.fetch(
        "SELECT stage, status, count(*) AS n FROM item_stages "
        "WHERE tenant_id = engram_current_tenant() AND status <> 'done' GROUP BY stage, status"
    ):
        inventory.open_stages[(row["stage"], row["status"])] = row["n"]
    row = await conn.fetchrow(
        "SELECT count(*) AS n, min(created_at) AS oldest FROM memory_items "
        "WHERE tenant_id = engram_current_tenant() AND review_status = 'proposed' AND invalidated_at IS NULL"
    )
    inventory.proposals, inventory.oldest_proposal = row["n"], row["oldest"]
    return inventory
