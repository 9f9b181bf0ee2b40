"""The consumer inbox: one row per (consumer, event) makes every consumer's effect exactly-once."""

from __future__ import annotations

import asyncpg


async def claim(conn: asyncpg.Connection, consumer: str, event_id: str, tenant_id: str) -> bool:
    """Record the event as processed by ``consumer`` in the caller's transaction.

    False means it was processed before: the caller must apply nothing and just acknowledge."""
    inserted = await conn.fetchval(
        "INSERT INTO consumer_inbox (tenant_id, consumer, event_id) VALUES ($1, $2, $3) "
        "ON CONFLICT (consumer, event_id) DO NOTHING RETURNING true",
        tenant_id,
        consumer,
        event_id,
    )
    return bool(inserted)


async def claim_many(conn: asyncpg.Connection, consumer: str, tenant_id: str, event_ids: list[str]) -> set[str]:
    """``claim`` for a batch of one tenant's events, in one statement: the ones recorded now (the others were
    processed before). An id given twice is recorded, and returned, once."""
    rows = await conn.fetch(
        "INSERT INTO consumer_inbox (tenant_id, consumer, event_id) "
        "SELECT $1, $2, e FROM unnest($3::uuid[]) WITH ORDINALITY AS t(e, n) ORDER BY n "
        "ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id",
        tenant_id,
        consumer,
        list(dict.fromkeys(event_ids)),
    )
    return {str(r["event_id"]) for r in rows}


async def seen(conn: asyncpg.Connection, consumer: str, event_id: str) -> bool:
    """Whether ``consumer`` has already had the effect of ``event_id``."""
    return bool(
        await conn.fetchval("SELECT true FROM consumer_inbox WHERE consumer = $1 AND event_id = $2", consumer, event_id)
    )


async def seen_among(conn: asyncpg.Connection, consumer: str, event_ids: list[str]) -> set[str]:
    """Which of ``event_ids`` ``consumer`` has already had the effect of (``seen`` for a batch, one statement)."""
    rows = await conn.fetch(
        "SELECT event_id FROM consumer_inbox WHERE consumer = $1 AND event_id = ANY($2::uuid[])", consumer, event_ids
    )
    return {str(r["event_id"]) for r in rows}


async def prune(conn: asyncpg.Connection, older_than_days: int, batch: int) -> int:
    """Delete at most ``batch`` inbox rows processed more than ``older_than_days`` ago, oldest first; rows
    another sweep holds are skipped (system scope). The retention must outlast every redelivery the stream can
    make (``Settings.inbox_retention_days``). Returns how many went."""
    status = await conn.execute(
        """WITH old AS (SELECT consumer, event_id FROM consumer_inbox
                        WHERE processed_at < now() - make_interval(days => $1)
                        ORDER BY processed_at LIMIT $2 FOR UPDATE SKIP LOCKED)
           DELETE FROM consumer_inbox i USING old WHERE i.consumer = old.consumer AND i.event_id = old.event_id""",
        older_than_days,
        batch,
    )
    return int(status.split()[-1])
