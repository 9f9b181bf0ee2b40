"""Reads behind promotion: the proposed items in order, and the sweep's cursor per tenant."""

from __future__ import annotations

from datetime import datetime

import asyncpg


async def proposed_after(conn: asyncpg.Connection, cursor: tuple[datetime, str] | None, limit: int) -> list[str]:
    """Ids of proposed, live items after ``cursor`` in (created_at, id) order."""
    rows = await conn.fetch(
        """SELECT id FROM memory_items
           WHERE review_status = 'proposed' AND invalidated_at IS NULL AND tenant_id = engram_current_tenant()
             AND ($1::timestamptz IS NULL OR (created_at, id) > ($1, $2::uuid))
           ORDER BY created_at, id LIMIT $3""",
        cursor[0] if cursor else None,
        cursor[1] if cursor else None,
        max(limit, 0),
    )
    return [str(r["id"]) for r in rows]


async def cursor(conn: asyncpg.Connection) -> tuple[datetime, str] | None:
    row = await conn.fetchrow("SELECT last_created_at, last_id FROM promotion_cursors")
    return (row["last_created_at"], str(row["last_id"])) if row else None


async def save_cursor(conn: asyncpg.Connection, tenant_id: str, last_id: str | None) -> None:
    """Continue after ``last_id`` next time; None starts the next pass from the beginning."""
    if last_id is None:
        await conn.execute("DELETE FROM promotion_cursors")
        return
    await conn.execute(
        """INSERT INTO promotion_cursors (tenant_id, last_created_at, last_id)
           SELECT $1, created_at, id FROM memory_items WHERE id = $2
           ON CONFLICT (tenant_id) DO UPDATE SET last_created_at = EXCLUDED.last_created_at,
               last_id = EXCLUDED.last_id, updated_at = now()""",
        tenant_id,
        last_id,
    )
