"""The asyncpg pool and the one helper through which every tenant transaction sets ``app.tenant_id``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
from pgvector.asyncpg import register_vector

from engram.errors import Unavailable


async def _init_connection(conn: asyncpg.Connection) -> None:
    await register_vector(conn)


async def create_pool(database_url: str, *, role: str | None, min_size: int = 1, max_size: int = 10) -> asyncpg.Pool:
    """Open a pool. With ``role`` every connection acts as that (non-owner) role, so Row Level Security applies."""
    server_settings = {"role": role} if role else {}
    try:
        pool = await asyncpg.create_pool(
            database_url,
            min_size=min_size,
            max_size=max_size,
            init=_init_connection,
            server_settings=server_settings,
        )
    except (OSError, asyncpg.PostgresError) as exc:
        raise Unavailable(f"cannot connect to PostgreSQL: {exc}") from exc
    assert pool is not None
    return pool


@asynccontextmanager
async def tenant_tx(pool: asyncpg.Pool, tenant_id: str) -> AsyncIterator[asyncpg.Connection]:
    """A transaction scoped to one tenant: RLS policies see ``app.tenant_id`` for its whole length only."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT set_config('app.tenant_id', $1, true)", str(tenant_id))
        yield conn


@asynccontextmanager
async def system_tx(pool: asyncpg.Pool) -> AsyncIterator[asyncpg.Connection]:
    """A cross-tenant transaction for infrastructure work (the outbox relay); policies must allow it."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT set_config('app.system_scope', 'on', true)")
        yield conn
