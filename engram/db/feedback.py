"""Feedback verdicts: the history per principal and item, the daily count, and the effect on the item."""

from __future__ import annotations

from datetime import datetime

import asyncpg


async def latest_verdict(conn: asyncpg.Connection, item_id: str, principal_id: str) -> str | None:
    """The principal's current verdict on the item (None when it gave none)."""
    value = await conn.fetchval(
        "SELECT verdict FROM feedback_events WHERE item_id = $1 AND principal_id = $2 ORDER BY id DESC LIMIT 1",
        item_id,
        principal_id,
    )
    return str(value) if value is not None else None


async def daily_limit(conn: asyncpg.Connection) -> int | None:
    """The tenant's ``feedback_daily_limit`` (None when unset)."""
    value = await conn.fetchval("SELECT (config->>'feedback_daily_limit')::int FROM tenant_config")
    return int(value) if value is not None else None


async def given_today(conn: asyncpg.Connection, principal_id: str) -> tuple[int, datetime | None]:
    """How many verdicts the principal recorded in the last day, and when the oldest of them was."""
    row = await conn.fetchrow(
        "SELECT count(*) AS n, min(created_at) AS oldest FROM feedback_events "
        "WHERE principal_id = $1 AND created_at > now() - interval '1 day'",
        principal_id,
    )
    return int(row["n"]), row["oldest"]


async def record(
    conn: asyncpg.Connection,
    *,
    tenant_id: str,
    item_id: str,
    principal_id: str,
    verdict: str,
    recall_id: str | None,
    importance_before: float,
    importance_after: float,
) -> None:
    """Append the verdict and apply it: the item's new importance, and a useful verdict restarts the count of
    recalls since the last useful one."""
    await conn.execute(
        """INSERT INTO feedback_events (tenant_id, item_id, principal_id, verdict, recall_id, importance_before,
                                        importance_after) VALUES ($1, $2, $3, $4, $5, $6, $7)""",
        tenant_id,
        item_id,
        principal_id,
        verdict,
        recall_id,
        importance_before,
        importance_after,
    )
    await conn.execute(
        "UPDATE memory_items SET importance = $2, recalls_since_useful = CASE WHEN $3 = 'useful' THEN 0 "
        "ELSE recalls_since_useful END WHERE id = $1",
        item_id,
        importance_after,
        verdict,
    )


async def reset_recalls_since_useful(conn: asyncpg.Connection, item_id: str) -> None:
    await conn.execute("UPDATE memory_items SET recalls_since_useful = 0 WHERE id = $1", item_id)
