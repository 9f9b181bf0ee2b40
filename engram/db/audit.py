"""The audit trail of memory items: ``item_events`` is append-only (the table refuses updates and deletes)."""

from __future__ import annotations

import json
from dataclasses import dataclass
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


@dataclass(frozen=True)
class AuditRow:
    """One ``record`` of a batch."""

    tenant_id: str
    item_id: str
    actor_id: str | None
    action: str
    new_value: dict[str, Any] | None = None
    old_value: dict[str, Any] | None = None
    reason: str | None = None
    request_id: str | None = None


async def record_many(conn: asyncpg.Connection, rows: list[AuditRow]) -> None:
    """``record`` for many rows in one statement, appended in the order given."""
    if not rows:
        return
    await conn.execute(
        "INSERT INTO item_events (tenant_id, item_id, actor_id, action, old_value, new_value, reason, request_id) "
        "SELECT t, i, a, ac, o::jsonb, nv::jsonb, r, q "
        "FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) "
        "WITH ORDINALITY AS x(t, i, a, ac, o, nv, r, q, n) ORDER BY n",
        [row.tenant_id for row in rows],
        [str(row.item_id) for row in rows],
        [row.actor_id for row in rows],
        [row.action for row in rows],
        [json.dumps(row.old_value) if row.old_value is not None else None for row in rows],
        [json.dumps(row.new_value) if row.new_value is not None else None for row in rows],
        [row.reason for row in rows],
        [row.request_id or None for row in rows],
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
