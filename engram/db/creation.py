"""The rows a new memory brings with it, written in one statement: its ``created`` audit row, its pending
pipeline stages and its ``memory.created`` outbox row (the relay is woken when the transaction commits).
Row by row they are ``audit.record``, ``stages.record`` and ``outbox.add``."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

import asyncpg

from engram.db.outbox import NOTIFY_CHANNEL


async def record(
    conn: asyncpg.Connection,
    *,
    tenant_id: str,
    item_id: UUID | str,
    actor_id: str | None,
    audit_value: dict[str, Any],
    request_id: str | None,
    stages: list[str],
    event_id: str,
    subject: str,
    envelope: dict[str, Any],
) -> None:
    await conn.execute(
        """WITH audit AS (
                INSERT INTO item_events (tenant_id, item_id, actor_id, action, new_value, request_id)
                VALUES ($1, $2, $3, 'created', $4::jsonb, $5)),
            pending AS (
                INSERT INTO item_stages (tenant_id, item_id, stage, status, detail)
                SELECT $1, $2, stage, 'pending', '' FROM unnest($6::text[]) AS stage
                ON CONFLICT (item_id, stage) DO UPDATE SET status = EXCLUDED.status, detail = EXCLUDED.detail,
                                                           updated_at = now()),
            queued AS (
                INSERT INTO outbox (tenant_id, event_id, subject, envelope) VALUES ($1, $7, $8, $9::jsonb))
           SELECT pg_notify($10, '')""",
        tenant_id,
        item_id,
        actor_id,
        json.dumps(audit_value),
        request_id or None,
        stages,
        event_id,
        subject,
        json.dumps(envelope),
        NOTIFY_CHANNEL,
    )
