"""What the write path reads about a principal."""

from __future__ import annotations

import asyncpg


async def trusted(conn: asyncpg.Connection, principal_id: str) -> bool:
    """Whether the principal is marked trusted (its writes carry more authority); False when unknown."""
    return bool(await conn.fetchval("SELECT trusted FROM principals WHERE id = $1", principal_id))
