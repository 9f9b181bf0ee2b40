"""The audit trail of memory items: ``item_events`` is append-only (the table refuses updates and deletes)."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

import asyncpg

from engram.domain.models import ItemEvent


async def record(
    conn: asyncpg.Connection,
    *,
    tenant_id: str,
    item_id: UUID | str,
    actor_id: str | None,
    action: str,
    new_value: dict[str, Any] | None = None,
    old_value: dict[str, Any] | None = None,
    reason: str | None = None,
    request_id: str | None = None,
) -> None:
    """Append one audit row (the table refuses updates and deletes)."""
    await conn.execute(
        "INSERT INTO item_events (tenant_id, item_id, actor_id, action, old_value, new_value, reason, request_id) "
        "VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8)",
        tenant_id,
        item_id,
        actor_id,
        action,
        json.dumps(old_value) if old_value is not None else None,
        json.dumps(new_value) if new_value is not None else None,
        reason,
        request_id or None,
    )


async def trail(conn: asyncpg.Connection, item_id: str) -> list[ItemEvent]:
    """The audit trail of one item, oldest first."""
    rows = await conn.fetch(
        "SELECT id, action, actor_id, old_value::text AS old_value, new_value::text AS new_value, reason, "
        "request_id, created_at FROM item_events WHERE item_id = $1 ORDER BY id",
        item_id,
    )
    return [
        ItemEvent(
            id=r["id"],
            action=r["action"],
            actor_id=str(r["actor_id"]) if r["actor_id"] else None,
            old_value=_json_or_none(r["old_value"]),
            new_value=_json_or_none(r["new_value"]),
            reason=r["reason"],
            request_id=r["request_id"],
            created_at=r["created_at"],
        )
        for r in rows
    ]


def _json_or_none(text: str | None) -> dict[str, Any] | None:
    return json.loads(text) if text is not None else None
