"""The tenants: for the passes that visit each in turn (the ingest sweep, the promotion sweep), and the names of
publishing tenants whose memories recall serves."""

from __future__ import annotations

import asyncpg


async def ids(conn: asyncpg.Connection) -> list[str]:
    """Every tenant's id, in a stable order (needs system scope: ``engram.db.pool.system_tx``)."""
    return [str(r["id"]) for r in await conn.fetch("SELECT id FROM tenants ORDER BY id")]


async def names(conn: asyncpg.Connection, tenant_ids: list[str]) -> dict[str, str]:
    """The names of the given tenants the transaction may see (its own, and publishing ones), by id."""
    rows = await conn.fetch("SELECT id, name FROM tenants WHERE id = ANY($1::uuid[])", tenant_ids)
    return {str(r["id"]): str(r["name"]) for r in rows}
