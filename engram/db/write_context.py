"""What a write reads before it stores a memory, in one round trip: the kind, the workspace it goes into and
the caller's role there, whether the caller is trusted, the database's clock, the tenant's time-to-live
overrides and, for possible_supersedes, the ids of the recent window of the kind (``items.live_window``'s). The
checks on these values are ``services/ingest/checks.py``'s."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from engram.db.items import window_sql
from engram.db.kinds import EFFECTIVE_COLUMNS, WITH_SWITCHES
from engram.domain.models import MemoryKind


@dataclass(frozen=True)
class WriteContext:
    kind: MemoryKind | None  # None: no kind of that name
    workspace_id: str | None  # the requested one, else the tenant's default (None: the tenant has none)
    role: str | None  # the caller's role in that workspace (None: not a member, or no such workspace)
    trusted: bool
    now: datetime  # the transaction's start time, as now() in SQL
    ttl_days: Any  # the tenant's ``ttl_days`` overrides (None when unset)
    window: bytes = b""  # the ids of the most recent live items of the kind, 16 bytes each, newest first


async def load(
    conn: asyncpg.Connection, kind: str, workspace_id: str | None, principal_id: str, window: int = 0
) -> WriteContext:
    """Inside a tenant transaction: the values above for a write of ``kind`` by ``principal_id`` into
    ``workspace_id`` (None: the tenant's default workspace), with the ``window`` most recent live items of
    ``kind`` (``items.live_window``; none for 0), read before the write adds its own."""
    row = await conn.fetchrow(
        f"""SELECT kd.name, kd.singleton, kd.requires_review, kd.stays_in_recall_when_disputed,
                   kd.default_importance, kd.enabled, w.id AS workspace_id, m.role,
                   coalesce((SELECT p.trusted FROM principals p WHERE p.id = $3), false) AS trusted,
                   now() AS now, (SELECT c.config -> 'ttl_days' FROM tenant_config c) AS ttl_days,
                   ({window_sql("$1", "$4")}) AS window_ids
            FROM (SELECT coalesce($2::uuid, (SELECT id FROM workspaces WHERE name = 'default' LIMIT 1)) AS id) w
            LEFT JOIN LATERAL (SELECT {EFFECTIVE_COLUMNS} FROM {WITH_SWITCHES} WHERE k.name = $1
                               ORDER BY k.tenant_id NULLS LAST LIMIT 1) kd ON true
            LEFT JOIN workspace_members m ON m.workspace_id = w.id AND m.principal_id = $3""",
        kind,
        workspace_id,
        principal_id,
        window,
    )
    found = row["name"] is not None
    return WriteContext(
        kind=MemoryKind(
            name=row["name"],
            singleton=row["singleton"],
            requires_review=row["requires_review"],
            stays_in_recall_when_disputed=row["stays_in_recall_when_disputed"],
            default_importance=row["default_importance"],
            enabled=row["enabled"],
        )
        if found
        else None,
        workspace_id=str(row["workspace_id"]) if row["workspace_id"] else None,
        role=str(row["role"]) if row["role"] else None,
        trusted=bool(row["trusted"]),
        now=row["now"],
        ttl_days=json.loads(row["ttl_days"]) if row["ttl_days"] is not None else None,
        window=bytes(row["window_ids"]),
    )
