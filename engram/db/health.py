"""What an operator's health check reads from the database: the server, pgvector and the applied migrations."""

from __future__ import annotations

import asyncpg


async def server_version(conn: asyncpg.Connection) -> str:
    return str(await conn.fetchval("SHOW server_version"))


async def pgvector_version(conn: asyncpg.Connection) -> str | None:
    """The installed ``vector`` extension's version, or None when it is not installed in this database."""
    version = await conn.fetchval("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
    return str(version) if version is not None else None


async def applied_migrations(conn: asyncpg.Connection) -> dict[int, str] | None:
    """Version → file name of every applied migration; None when the database was never migrated."""
    if not await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL"):
        return None
    rows = await conn.fetch("SELECT version, name FROM schema_migrations ORDER BY version")
    return {int(r["version"]): str(r["name"]) for r in rows}
