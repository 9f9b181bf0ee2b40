"""The asyncpg pool and the one helper through which every tenant transaction sets ``app.tenant_id``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit, urlunsplit

import asyncpg
from pgvector.asyncpg import register_vector

from engram.config import Settings
from engram.errors import Unavailable


async def _init_connection(conn: asyncpg.Connection) -> None:
    await register_vector(conn)


async def _nothing_to_reset(conn: asyncpg.Connection) -> None:
    """The pool's reset of a released connection, after asyncpg has rolled back any transaction left open and
    dropped the connection's listeners. asyncpg's own reset sends ``pg_advisory_unlock_all(); CLOSE ALL;
    UNLISTEN *; RESET ALL`` — a round trip on every release, i.e. on every transaction of every service. Engram
    leaves nothing for it to undo: settings are transaction-local (``set_config(…, true)``, ``SET LOCAL``), no
    session lock, cursor or session setting is taken on a pooled connection, and the outbox relay unlistens
    before it releases its connection. (The role chosen at connection start is the session's default, which
    ``RESET ALL`` would keep anyway.)"""


async def create_pool(database_url: str, *, role: str | None, min_size: int = 1, max_size: int = 10) -> asyncpg.Pool:
    """Open a pool. With ``role`` every connection acts as that (non-owner) role, so Row Level Security applies."""
    server_settings = {"role": role} if role else {}
    try:
        pool = await asyncpg.create_pool(
            database_url,
            min_size=min_size,
            max_size=max_size,
            init=_init_connection,
            reset=_nothing_to_reset,
            server_settings=server_settings,
        )
    except (OSError, asyncpg.PostgresError) as exc:
        raise Unavailable(f"cannot connect to PostgreSQL: {exc}") from exc
    assert pool is not None
    return pool


async def service_pool(settings: Settings, *, min_size: int = 1, max_size: int = 10) -> asyncpg.Pool:
    """The pool a service uses: logged in as the app role when ENGRAM_APP_DATABASE_URL is set, otherwise the
    owner URL switched to the app role at connection start."""
    if settings.app_database_url:
        return await create_pool(settings.app_database_url, role=None, min_size=min_size, max_size=max_size)
    if not settings.database_url:
        raise Unavailable("ENGRAM_DATABASE_URL (or ENGRAM_APP_DATABASE_URL) is not set")
    return await create_pool(settings.database_url, role=settings.app_role, min_size=min_size, max_size=max_size)


def with_user(url: str, user: str) -> str:
    """``url`` logging in as ``user`` (no password: for servers that trust local connections)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{user}@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


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


async def pool_probe(pool: asyncpg.Pool, timeout_s: float) -> bool:
    """``probe`` through a connection of an open pool (no new connection): whether the schema is migrated."""
    async with pool.acquire(timeout=timeout_s) as conn:
        return bool(await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL", timeout=timeout_s))
