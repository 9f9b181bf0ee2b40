"""The migration runner and the schema's own guarantees, against a real PostgreSQL."""

from __future__ import annotations

import asyncio
import re
import shutil
import uuid
from pathlib import Path

import asyncpg
import pytest

from engram.config import Settings
from engram.db.migrate import MIGRATIONS_DIR, MigrationError, load_migrations, migrate
from engram.db.pool import tenant_tx
from tests.support.tenants import create_tenant


async def _fresh_database(owner_pool: asyncpg.Pool, database_url: str) -> str:
    name = f"mig_{uuid.uuid4().hex[:12]}"
    async with owner_pool.acquire() as conn:
        await conn.execute(f'CREATE DATABASE "{name}"')
    return database_url.rsplit("/", 1)[0] + f"/{name}"


async def test_second_run_applies_nothing(migrated: str) -> None:
    assert await migrate(migrated, Settings()) == []


async def test_concurrent_runs_apply_each_migration_once(owner_pool: asyncpg.Pool, migrated: str) -> None:
    url = await _fresh_database(owner_pool, migrated)
    first, second = await asyncio.gather(migrate(url, Settings()), migrate(url, Settings()))
    assert sorted(first + second) == [m.name for m in load_migrations()]
    conn = await asyncpg.connect(url)
    try:
        assert await conn.fetchval("SELECT count(*) FROM schema_migrations") == len(load_migrations())
        assert await conn.fetchval("SELECT count(*) FROM memory_kinds WHERE tenant_id IS NULL") == 9
    finally:
        await conn.close()


async def test_an_edited_applied_migration_is_refused(owner_pool: asyncpg.Pool, migrated: str, tmp_path: Path) -> None:
    url = await _fresh_database(owner_pool, migrated)
    directory = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS_DIR, directory)
    assert await migrate(url, Settings(), directory) == [m.name for m in load_migrations()]
    edited = directory / "001_schema.sql"
    edited.write_text(edited.read_text() + "\n-- an innocent-looking edit\n")
    with pytest.raises(MigrationError, match="edited after it was applied"):
        await migrate(url, Settings(), directory)


async def test_item_events_refuses_update_and_delete(owner_pool: asyncpg.Pool) -> None:
    ctx = await create_tenant(owner_pool)
    async with owner_pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO item_events (tenant_id, item_id, action) VALUES ($1, $2, 'created')",
            uuid.UUID(ctx.tenant_id),
            uuid.uuid4(),
        )
        assert (
            await conn.fetchval("SELECT count(*) FROM item_events WHERE tenant_id = $1", uuid.UUID(ctx.tenant_id)) == 1
        )
        with pytest.raises(asyncpg.InsufficientPrivilegeError, match="append-only"):
            await conn.execute(
                "UPDATE item_events SET action = 'forged' WHERE tenant_id = $1", uuid.UUID(ctx.tenant_id)
            )
        with pytest.raises(asyncpg.InsufficientPrivilegeError, match="append-only"):
            await conn.execute("DELETE FROM item_events WHERE tenant_id = $1", uuid.UUID(ctx.tenant_id))
        assert (
            await conn.fetchval("SELECT action FROM item_events WHERE tenant_id = $1", uuid.UUID(ctx.tenant_id))
            == "created"
        )


async def test_rls_bounds_a_query_without_tenant_filter(owner_pool: asyncpg.Pool, app_pool: asyncpg.Pool) -> None:
    first, second = await create_tenant(owner_pool), await create_tenant(owner_pool)
    # the owner (positive control) sees both tenants' workspaces
    async with owner_pool.acquire() as conn:
        both = await conn.fetchval(
            "SELECT count(*) FROM workspaces WHERE tenant_id = ANY($1::uuid[])", [first.tenant_id, second.tenant_id]
        )
    assert both == 2
    async with tenant_tx(app_pool, first.tenant_id) as conn:
        assert await conn.fetchval("SELECT current_user") == Settings().app_role
        rows = await conn.fetch("SELECT tenant_id FROM workspaces")  # no tenant filter on purpose
        assert {str(r["tenant_id"]) for r in rows} == {first.tenant_id}
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute(
                "INSERT INTO workspaces (tenant_id, id, name) VALUES ($1, $2, 'sneaky')",
                uuid.UUID(second.tenant_id),
                uuid.uuid4(),
            )
    async with app_pool.acquire() as conn:  # no tenant set at all: nothing visible
        assert await conn.fetchval("SELECT count(*) FROM workspaces") == 0


async def test_services_role_cannot_bypass_rls(app_pool: asyncpg.Pool) -> None:
    async with app_pool.acquire() as conn:
        row = await conn.fetchrow("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user")
    assert row is not None and not row["rolsuper"] and not row["rolbypassrls"]


async def test_services_can_log_in_as_the_app_role_itself(owner_pool: asyncpg.Pool, migrated: str) -> None:
    """Logged in as the app role (not switched to it), a session cannot RESET ROLE back to the owner."""
    from engram.db.pool import with_user

    first = await create_tenant(owner_pool)
    conn = await asyncpg.connect(with_user(migrated, Settings().app_role))
    try:
        await conn.execute("RESET ROLE")
        assert await conn.fetchval("SELECT session_user") == await conn.fetchval("SELECT current_user") == "engram_app"
        assert await conn.fetchval("SELECT count(*) FROM workspaces") == 0
        async with conn.transaction():
            await conn.execute("SELECT set_config('app.tenant_id', $1, true)", first.tenant_id)
            assert await conn.fetchval("SELECT count(*) FROM workspaces") == 1  # positive control
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute("SET ROLE postgres")
    finally:
        await conn.close()


async def test_the_unread_trigram_index_is_gone_and_the_recent_window_index_is_there(owner_pool: asyncpg.Pool) -> None:
    names = {r["indexname"] for r in await owner_pool.fetch("SELECT indexname FROM pg_indexes")}
    assert "memory_items_recent_live" in names  # positive control: the index the window search reads
    assert "memory_items_trgm" not in names


async def test_the_unread_full_text_gin_index_is_gone_and_the_tsvector_stays(owner_pool: asyncpg.Pool) -> None:
    """Migration 032: the services' role cannot use memory_items_tsv under Row Level Security (ADR 0006), so it is
    dropped; content_tsv stays, for ranking, the public-memory branch and the term table's triggers."""
    names = {r["indexname"] for r in await owner_pool.fetch("SELECT indexname FROM pg_indexes")}
    assert "memory_terms_pkey" in names  # positive control: the index keyword candidates come from
    assert "memory_items_tsv" not in names
    assert await owner_pool.fetchval(
        "SELECT count(*) FROM pg_attribute WHERE attrelid = 'memory_items'::regclass AND attname = 'content_tsv'"
    )


async def test_public_memories_have_their_own_newest_first_index(owner_pool: asyncpg.Pool) -> None:
    """Migration 033: a partial btree over the public rows alone, newest first, for the keyword search's public
    branch (Row Level Security lets the services' role use it: nothing in its predicate is evaluated on a row)."""
    definition = await owner_pool.fetchval(
        "SELECT indexdef FROM pg_indexes WHERE tablename = 'memory_items' AND indexname = 'memory_items_public_recent'"
    )
    assert definition is not None
    assert "btree (created_at DESC)" in definition, definition
    assert "WHERE ((visibility = 'public'::text) AND (content_tsv IS NOT NULL))" in definition, definition


async def test_the_possible_supersedes_window_is_read_by_tenant_and_kind_newest_first(
    owner_pool: asyncpg.Pool, app_pool: asyncpg.Pool
) -> None:
    ctx = await create_tenant(owner_pool)
    async with tenant_tx(app_pool, ctx.tenant_id) as conn:
        await conn.execute("SET LOCAL enable_seqscan = off")  # the plan a large table gets
        plan = "\n".join(
            r[0]
            for r in await conn.fetch(
                "EXPLAIN SELECT id FROM memory_items WHERE tenant_id = engram_current_tenant() AND kind = 'fact' "
                "AND invalidated_at IS NULL AND superseded_by IS NULL "
                "AND review_status IN ('proposed', 'active', 'disputed') ORDER BY created_at DESC LIMIT 500"
            )
        )
    condition = next(line for line in plan.splitlines() if "Index Cond" in line)
    assert "memory_items_recent_live" in plan and "Sort" not in plan
    assert "(tenant_id = " in condition and "(kind = 'fact'::text)" in condition


async def test_every_policy_reads_the_tenant_setting_once_per_statement(owner_pool: asyncpg.Pool) -> None:
    """Migration 031: policies call engram_current_tenant() and engram_system_scope() as subqueries (an InitPlan,
    evaluated once per statement), never per row; the scans below still see only the caller's tenant."""
    async with owner_pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT tablename, policyname, coalesce(qual, '') || ' ' || coalesce(with_check, '') AS expr "
            "FROM pg_policies WHERE schemaname = current_schema()"
        )
    bare = [
        (r["tablename"], r["policyname"])
        for r in rows
        if re.search(r"(?<!SELECT )engram_(current_tenant|system_scope)\(\)", r["expr"])
    ]
    assert bare == []
    assert sum("SELECT engram_current_tenant()" in r["expr"] for r in rows) >= 20


async def test_a_scan_under_the_policy_reads_the_tenant_once(owner_pool: asyncpg.Pool, app_pool: asyncpg.Pool) -> None:
    first, second = await create_tenant(owner_pool), await create_tenant(owner_pool)
    async with tenant_tx(app_pool, first.tenant_id) as conn:
        plan = "\n".join(r[0] for r in await conn.fetch("EXPLAIN SELECT id FROM memory_items WHERE kind = 'fact'"))
        assert "InitPlan" in plan and "current_setting" not in plan.split("InitPlan")[0], plan
        assert await conn.fetchval("SELECT count(*) FROM workspaces WHERE tenant_id <> $1::uuid", first.tenant_id) == 0
    async with tenant_tx(app_pool, second.tenant_id) as conn:
        assert await conn.fetchval("SELECT count(*) FROM workspaces") == 1
