"""The asyncpg pool, the one helper through which every tenant transaction sets ``app.tenant_id`` (``tenant_tx``:
``BEGIN`` and the setting in one round trip), and ``savepoint`` for a savepoint inside such a transaction (asyncpg's
``Connection.transaction()`` does not nest in a transaction it did not start)."""

from __future__ import annotations

import re
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


# A tenant id that can be written into a statement as it is (a UUID's text): the tenant setting then travels with
# BEGIN in one round trip. Anything else is passed as a parameter, in a statement of its own.
_PLAIN_TENANT = re.compile(r"[0-9A-Fa-f-]{1,64}")


@asynccontextmanager
async def _transaction(conn: asyncpg.Connection, begin: str) -> AsyncIterator[asyncpg.Connection]:
    """``begin`` (``BEGIN`` and the transaction's settings, one simple query: one round trip), then the body, then
    ``COMMIT``; ``ROLLBACK`` when the body raises (cancellation included). asyncpg's ``Connection.transaction()``
    costs a round trip for ``BEGIN`` alone and refuses to run inside a transaction it did not start: inside one of
    these, a savepoint is ``savepoint(conn)``."""
    try:
        await conn.execute(begin)
        yield conn
    except BaseException:
        if not conn.is_closed() and conn.is_in_transaction():
            await conn.execute("ROLLBACK")
        raise
    await conn.execute("COMMIT")


@asynccontextmanager
async def tenant_tx(pool: asyncpg.Pool, tenant_id: str) -> AsyncIterator[asyncpg.Connection]:
    """A transaction scoped to one tenant: RLS policies see ``app.tenant_id`` for its whole length only. The
    setting is transaction-local (``set_config(…, true)``) and is sent with ``BEGIN``."""
    tenant = str(tenant_id)
    async with pool.acquire() as conn:
        if _PLAIN_TENANT.fullmatch(tenant):
            async with _transaction(conn, f"BEGIN; SELECT set_config('app.tenant_id', '{tenant}', true)"):
                yield conn
        else:
            async with _transaction(conn, "BEGIN"):
                await conn.execute("SELECT set_config('app.tenant_id', $1, true)", tenant)
                yield conn


@asynccontextmanager
async def system_tx(pool: asyncpg.Pool) -> AsyncIterator[asyncpg.Connection]:
    """A cross-tenant transaction for infrastructure work (the outbox relay); policies must allow it."""
    async with pool.acquire() as conn, _transaction(conn, "BEGIN; SELECT set_config('app.system_scope', 'on', true)"):
        yield conn


@asynccontextmanager
async def savepoint(conn: asyncpg.Connection) -> AsyncIterator[asyncpg.Connection]:
    """A savepoint inside the caller's transaction (``tenant_tx``, ``system_tx``): released when the body ends,
    rolled back to when it raises, so the transaction stays usable and keeps what came before it."""
    global _savepoints
    _savepoints += 1
    name = f"engram_sp_{_savepoints}"
    await conn.execute(f"SAVEPOINT {name}")
    try:
        yield conn
    except BaseException:
        if not conn.is_closed():
            await conn.execute(f"ROLLBACK TO SAVEPOINT {name}; RELEASE SAVEPOINT {name}")
        raise
    await conn.execute(f"RELEASE SAVEPOINT {name}")


_savepoints = 0


async def pool_probe(pool: asyncpg.Pool, timeout_s: float) -> bool:
    """``probe`` through a connection of an open pool (no new connection): whether the schema is migrated."""
    async with pool.acquire(timeout=timeout_s) as conn:
        return bool(await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL", timeout=timeout_s))
