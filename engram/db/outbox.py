"""Outbox rows: written in the same transaction as the change they announce, published by the relay."""

from __future__ import annotations

import json
from typing import Any

import asyncpg

from engram.events.envelope import Event, subject_for

NOTIFY_CHANNEL = "engram_outbox"


async def add(conn: asyncpg.Connection, event: Event, subject_prefix: str) -> None:
    """Queue an event; the relay is woken when the transaction commits."""
    await conn.execute(
        "INSERT INTO outbox (tenant_id, event_id, subject, envelope) VALUES ($1, $2, $3, $4::jsonb)",
        event.tenant_id, event.id, subject_for(subject_prefix, event.tenant_id, event.entity_action),
        json.dumps(event.to_json()),
    )
    await conn.execute(f"NOTIFY {NOTIFY_CHANNEL}")


async def claim(conn: asyncpg.Connection, subject_prefix: str, limit: int) -> list[asyncpg.Record]:
    """Lock the oldest unsent rows under ``subject_prefix``; other relays skip them (any number may run)."""
    return await conn.fetch(
        "SELECT id, event_id, subject, envelope::text AS envelope FROM outbox "
        "WHERE sent_at IS NULL AND starts_with(subject, $1) ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED",
        subject_prefix + ".", limit,
    )


async def mark_sent(conn: asyncpg.Connection, ids: list[int]) -> None:
    await conn.execute("UPDATE outbox SET sent_at = now(), attempts = attempts + 1 WHERE id = ANY($1)", ids)


async def backlog(conn: asyncpg.Connection) -> tuple[int, float]:
    """Unsent rows and the age in seconds of the oldest (needs system scope)."""
    row: Any = await conn.fetchrow(
        "SELECT count(*) AS n, coalesce(extract(epoch FROM now() - min(created_at)), 0) AS age "
        "FROM outbox WHERE sent_at IS NULL"
    )
    return int(row["n"]), float(row["age"])
