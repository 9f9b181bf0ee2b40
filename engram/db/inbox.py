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


async def seen(conn: asyncpg.Connection, consumer: str, event_id: str) -> bool:
    """Whether ``consumer`` has already had the effect of ``event_id``."""
    return bool(
        await conn.fetchval("SELECT true FROM consumer_inbox WHERE consumer = $1 AND event_id = $2", consumer, event_id)
    )
