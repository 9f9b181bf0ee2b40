"""The memory kinds registry: built-ins (tenant_id NULL) and each tenant's custom kinds."""

from __future__ import annotations

from typing import Any

import asyncpg

from engram.db.pool import tenant_tx
from engram.domain.models import MemoryKind

KIND_COLUMNS = "name, singleton, requires_review, stays_in_recall_when_disputed, default_importance, enabled"


async def get_kind(conn: asyncpg.Connection, name: str) -> MemoryKind | None:
    """The tenant's kind of that name (its own custom kind first, then the built-in)."""
    row = await conn.fetchrow(
        "SELECT name, singleton, requires_review, stays_in_recall_when_disputed, default_importance, enabled "
        "FROM memory_kinds WHERE name = $1 ORDER BY tenant_id NULLS LAST LIMIT 1",
        name,
    )
    return MemoryKind(**dict(row)) if row else None


async def enabled_kind_names(conn: asyncpg.Connection) -> list[str]:
    rows = await conn.fetch("SELECT DISTINCT name FROM memory_kinds WHERE enabled ORDER BY name")
    return [r["name"] for r in rows]


async def list_kinds(pool: asyncpg.Pool, tenant_id: str) -> list[dict[str, Any]]:
    async with tenant_tx(pool, tenant_id) as conn:
        rows = await conn.fetch(
            f"SELECT {KIND_COLUMNS}, tenant_id IS NULL AS built_in FROM memory_kinds "
            "ORDER BY tenant_id NULLS FIRST, name")
    return [_plain(r) for r in rows]


def _plain(row: asyncpg.Record) -> dict[str, Any]:
    kind = dict(row)
    kind["default_importance"] = round(kind["default_importance"], 4)  # stored as real
    return kind


async def create(pool: asyncpg.Pool, tenant_id: str, name: str, flags: dict[str, Any]) -> dict[str, Any]:
    async with tenant_tx(pool, tenant_id) as conn:
        row = await conn.fetchrow(
            f"""INSERT INTO memory_kinds (tenant_id, name, singleton, requires_review, stays_in_recall_when_disputed,
                                          default_importance)
                VALUES ($1, $2, $3, $4, $5, $6) RETURNING {KIND_COLUMNS}, false AS built_in""",
            tenant_id, name, flags["singleton"], flags["requires_review"], flags["stays_in_recall_when_disputed"],
            flags["default_importance"])
    return _plain(row)


async def update(pool: asyncpg.Pool, tenant_id: str, name: str, changes: dict[str, Any]) -> dict[str, Any] | None:
    """Change a custom kind's flags; None when the tenant has no custom kind of that name."""
    assignments = ", ".join(f"{column} = ${i}" for i, column in enumerate(changes, start=3))
    async with tenant_tx(pool, tenant_id) as conn:
        row = await conn.fetchrow(
            f"UPDATE memory_kinds SET {assignments} WHERE tenant_id = $1 AND name = $2 "
            f"RETURNING {KIND_COLUMNS}, false AS built_in",
            tenant_id, name, *changes.values())
    return _plain(row) if row else None
