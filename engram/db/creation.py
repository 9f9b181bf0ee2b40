"""A new memory and the rows it brings with it, written in one statement: the item, its ``created`` audit row,
its pending pipeline stages and its ``memory.created`` outbox row (the relay is woken when the transaction
commits). Row by row they are ``items.insert``, ``audit.record``, ``stages.record`` and ``outbox.add``."""

from __future__ import annotations

import json
from typing import Any

import asyncpg

from engram.db.items import INSERT_ITEM, NewItem, insert_args, row_to_item
from engram.db.outbox import NOTIFY_CHANNEL
from engram.domain.models import MemoryItem


async def insert(
    conn: asyncpg.Connection,
    item: NewItem,
    *,
    actor_id: str | None,
    audit_value: dict[str, Any],
    request_id: str | None,
    stages: list[str],
    event_id: str,
    subject: str,
    envelope: dict[str, Any],
) -> MemoryItem | None:
    """The new item with its audit row, pending stages and
    outbox row, or nothing at all (None) when a live item holds the same content. The envelope is built before
    the insert, so its ``created_at`` must be the transaction's ``now()``, the item's default."""
    row = await conn.fetchrow(
        f"""WITH stored AS ({INSERT_ITEM}),
            audit AS (
                INSERT INTO item_events (tenant_id, item_id, actor_id, action, new_value, request_id)
                SELECT s.tenant_id, s.id, $28::uuid, 'created', $29::jsonb, $30::text FROM stored s),
            pending AS (
                INSERT INTO item_stages (tenant_id, item_id, stage, status, detail)
                SELECT s.tenant_id, s.id, stage, 'pending', '' FROM stored s, unnest($31::text[]) AS stage
                ON CONFLICT (item_id, stage) DO UPDATE SET status = EXCLUDED.status, detail = EXCLUDED.detail,
                                                           updated_at = now()),
            queued AS (
                INSERT INTO outbox (tenant_id, event_id, subject, envelope)
                SELECT s.tenant_id, $32::uuid, $33::text, $34::jsonb FROM stored s)
           SELECT s.*, pg_notify($35, '') FROM stored s""",
        *insert_args(item),
        actor_id,
        json.dumps(audit_value),
        request_id or None,
        stages,
        event_id,
        subject,
        json.dumps(envelope),
        NOTIFY_CHANNEL,
    )
    return row_to_item(row) if row else None
