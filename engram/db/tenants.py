"""The tenants, for the passes that visit each in turn (the ingest sweep, the promotion sweep)."""

from __future__ import annotations

import asyncpg


async def ids(conn: asyncpg.Connection) -> list[str]:
    """Every tenant's id, in a stable order (needs system scope: ``engram.db.pool.system_tx``)."""
    return [str(r["id"]) for r in await conn.fetch("SELECT id FROM tenants ORDER BY id")]
