"""The memory kinds registry: built-ins (tenant_id NULL) and each tenant's custom kinds."""

from __future__ import annotations

from typing import Any

import asyncpg

from engram.db.pool import tenant_tx
from engram.db.violations import unique
from engram.domain.models import MemoryKind

KIND_COLUMNS = "name, singleton, requires_review, stays_in_recall_when_disputed, default_importance, enabled"
# A built-in kind's ``enabled`` is the tenant's switch when it has set one (the shared row otherwise).
EFFECTIVE_COLUMNS = (
    "k.name, k.singleton, k.requires_review, k.stays_in_recall_when_disputed, k.default_importance, "
    "CASE WHEN k.tenant_id IS NULL THEN coalesce(s.enabled, k.enabled) ELSE k.enabled END AS enabled"
)
WITH_SWITCHES = "memory_kinds k LEFT JOIN tenant_kind_settings s ON k.tenant_id IS NULL AND s.name = k.name"


async def get_kind(conn: asyncpg.Connection, name: str) -> MemoryKind | None:
    """The tenant's kind of that name (its own custom kind first, then the built-in)."""
    row = await conn.fetchrow(
        f"SELECT {EFFECTIVE_COLUMNS} FROM {WITH_SWITCHES} WHERE k.name = $1 ORDER BY k.tenant_id NULLS LAST LIMIT 1",
        name,
    )
    return MemoryKind(**dict(row)) if row else None


async def effective_kinds(conn: asyncpg.Connection) -> dict[str, MemoryKind]:
    """Every kind the tenant has by name, as ``get_kind`` reads each (its own custom kind first, then the built-in),
    in one statement."""
    rows = await conn.fetch(f"SELECT {EFFECTIVE_COLUMNS} FROM {WITH_SWITCHES} ORDER BY k.tenant_id NULLS LAST")
    found: dict[str, MemoryKind] = {}
    for row in rows:
        found.setdefault(row["name"], MemoryKind(**dict(row)))
    return found


async def enabled_kind_names(conn: asyncpg.Connection) -> list[str]:
    rows = await conn.fetch(
        f"SELECT name FROM (SELECT {EFFECTIVE_COLUMNS} FROM {WITH_SWITCHES}) kinds "
        "WHERE enabled GROUP BY name ORDER BY name"
    )
    return [r["name"] for r in rows]


async def known_kind_names(conn: asyncpg.Connection) -> list[str]:
    """Every kind the tenant has, built-in or its own, enabled or not (items of a disabled kind remain)."""
    rows = await conn.fetch("SELECT DISTINCT name FROM memory_kinds ORDER BY name")
    return [r["name"] for r in rows]


async def list_kinds(pool: asyncpg.Pool, tenant_id: str) -> list[dict[str, Any]]:
    async with tenant_tx(pool, tenant_id) as conn:
        rows = await conn.fetch(
            f"SELECT {EFFECTIVE_COLUMNS}, k.tenant_id IS NULL AS built_in FROM {WITH_SWITCHES} "
            "ORDER BY k.tenant_id NULLS FIRST, k.name"
        )
    return [_plain(r) for r in rows]


def _plain(row: asyncpg.Record) -> dict[str, Any]:
    kind = dict(row)
    kind["default_importance"] = round(kind["default_importance"], 4)  # stored as real
    return kind


async def create(pool: asyncpg.Pool, tenant_id: str, name: str, flags: dict[str, Any]) -> dict[str, Any]:
    """A custom kind; ``Conflict`` (``name_taken``) when the tenant has one of that name."""
    async with tenant_tx(pool, tenant_id) as conn:
        with unique(f"kind {name!r} exists", field="name", code="name_taken"):
            row = await conn.fetchrow(
                f"""INSERT INTO memory_kinds (tenant_id, name, singleton, requires_review,
                                              stays_in_recall_when_disputed, default_importance)
                    VALUES ($1, $2, $3, $4, $5, $6) RETURNING {KIND_COLUMNS}, false AS built_in""",
                tenant_id,
                name,
                flags["singleton"],
                flags["requires_review"],
                flags["stays_in_recall_when_disputed"],
                flags["default_importance"],
            )
    return _plain(row)


async def update(pool: asyncpg.Pool, tenant_id: str, name: str, changes: dict[str, Any]) -> dict[str, Any] | None:
    """Change a custom kind's flags; None when the tenant has no custom kind of that name."""
    assignments = ", ".join(f"{column} = ${i}" for i, column in enumerate(changes, start=3))
    async with tenant_tx(pool, tenant_id) as conn:
        row = await conn.fetchrow(
            f"UPDATE memory_kinds SET {assignments} WHERE tenant_id = $1 AND name = $2 "
            f"RETURNING {KIND_COLUMNS}, false AS built_in",
            tenant_id,
            name,
            *changes.values(),
        )
    return _plain(row) if row else None


async def switch_built_in(pool: asyncpg.Pool, tenant_id: str, name: str, enabled: bool) -> dict[str, Any]:
    """Turn a built-in kind off or back on for one tenant (the shared row is never changed)."""
    async with tenant_tx(pool, tenant_id) as conn:
        await conn.execute(
            """INSERT INTO tenant_kind_settings (tenant_id, name, enabled) VALUES ($1, $2, $3)
               ON CONFLICT (tenant_id, name) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = now()""",
            tenant_id,
            name,
            enabled,
        )
        row = await conn.fetchrow(
            f"SELECT {EFFECTIVE_COLUMNS}, true AS built_in FROM {WITH_SWITCHES} "
            "WHERE k.tenant_id IS NULL AND k.name = $1",
            name,
        )
    return _plain(row)
