"""The services' connection pool: a released connection goes back without a reset statement, and what a
transaction set does not outlive it."""

from __future__ import annotations

import asyncpg
import pytest

from engram.config import Settings
from engram.db.pool import create_pool, savepoint, system_tx, tenant_tx

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_released_connection_is_reused_without_a_reset_round_trip(migrated: str) -> None:
    pool = await create_pool(migrated, role=Settings().app_role, min_size=1, max_size=1)
    sent: list[str] = []
    try:
        async with pool.acquire() as conn:
            conn.add_query_logger(lambda record: sent.append(record.query))
            assert await conn.fetchval("SELECT 1") == 1
        async with pool.acquire() as conn:  # the same connection (max_size 1)
            assert await conn.fetchval("SELECT 2") == 2
    finally:
        await pool.close()
    # asyncpg's default reset would have sent "SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL"
    # between the two
    assert sent == ["SELECT 1", "SELECT 2"]


async def test_what_a_tenant_transaction_set_is_gone_when_its_connection_is_reused(migrated: str) -> None:
    pool = await create_pool(migrated, role=Settings().app_role, min_size=1, max_size=1)
    tenant = "00000000-0000-4000-8000-0000000000b1"
    try:
        async with pool.acquire() as conn:
            work_mem = await conn.fetchval("SHOW work_mem")
        async with tenant_tx(pool, tenant) as conn:
            assert await conn.fetchval("SELECT current_setting('app.tenant_id', true)") == tenant
            await conn.execute("SET LOCAL work_mem = '7777kB'")
            assert await conn.fetchval("SHOW work_mem") == "7777kB"
        with pytest.raises(asyncpg.DivisionByZeroError):  # a transaction that fails is rolled back
            async with tenant_tx(pool, tenant) as conn:
                await conn.fetchval("SELECT 1 / 0")
        async with pool.acquire() as conn:
            assert await conn.fetchval("SELECT coalesce(current_setting('app.tenant_id', true), '')") == ""
            assert await conn.fetchval("SHOW work_mem") == work_mem
            assert await conn.fetchval("SELECT current_user") == Settings().app_role
            assert not conn.is_in_transaction()
    finally:
        await pool.close()


async def test_a_tenant_transaction_begins_with_its_setting_in_one_round_trip(migrated: str) -> None:
    pool = await create_pool(migrated, role=Settings().app_role, min_size=1, max_size=1)
    tenant = "00000000-0000-4000-8000-0000000000b2"
    sent: list[str] = []
    try:
        async with pool.acquire() as conn:
            conn.add_query_logger(lambda record: sent.append(record.query))
        async with tenant_tx(pool, tenant) as conn:
            assert await conn.fetchval("SELECT current_setting('app.tenant_id', true)") == tenant
        async with system_tx(pool) as conn:
            assert await conn.fetchval("SELECT current_setting('app.system_scope', true)") == "on"
        async with tenant_tx(pool, "not'a tenant") as conn:  # not a UUID's text: sent as a parameter, as before
            assert await conn.fetchval("SELECT current_setting('app.tenant_id', true)") == "not'a tenant"
        async with pool.acquire() as conn:
            assert await conn.fetchval("SELECT coalesce(current_setting('app.tenant_id', true), '')") == ""
            assert not conn.is_in_transaction()
    finally:
        await pool.close()
    assert sent[:6] == [
        f"BEGIN; SELECT set_config('app.tenant_id', '{tenant}', true)",
        "SELECT current_setting('app.tenant_id', true)",
        "COMMIT",
        "BEGIN; SELECT set_config('app.system_scope', 'on', true)",
        "SELECT current_setting('app.system_scope', true)",
        "COMMIT",
    ]
    assert sent[6:9] == [
        "BEGIN",
        "SELECT set_config('app.tenant_id', $1, true)",
        "SELECT current_setting('app.tenant_id', true)",
    ]


async def test_a_savepoint_rolls_back_its_own_work_and_keeps_the_transactions(migrated: str) -> None:
    pool = await create_pool(migrated, role=Settings().app_role, min_size=1, max_size=1)
    tenant = "00000000-0000-4000-8000-0000000000b3"
    try:
        async with tenant_tx(pool, tenant) as conn:
            await conn.execute("CREATE TEMP TABLE sp_probe (n int) ON COMMIT DROP")
            await conn.execute("INSERT INTO sp_probe VALUES (1)")
            with pytest.raises(asyncpg.DivisionByZeroError):
                async with savepoint(conn):
                    await conn.execute("INSERT INTO sp_probe VALUES (2)")
                    await conn.fetchval("SELECT 1 / 0")
            async with savepoint(conn):  # the transaction is usable again; a savepoint that ends well is kept
                await conn.execute("INSERT INTO sp_probe VALUES (3)")
                with pytest.raises(asyncpg.UniqueViolationError):  # nested
                    async with savepoint(conn):
                        await conn.execute("INSERT INTO sp_probe VALUES (4)")
                        raise asyncpg.UniqueViolationError("probe")
            assert [r["n"] for r in await conn.fetch("SELECT n FROM sp_probe ORDER BY n")] == [1, 3]
            assert await conn.fetchval("SELECT current_setting('app.tenant_id', true)") == tenant
        async with pool.acquire() as conn:
            assert not conn.is_in_transaction()
    finally:
        await pool.close()
