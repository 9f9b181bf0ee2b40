"""What a write reads in its one query before it stores (engram/db/write_context.py), and the rows a new
memory brings in its one statement (engram/db/creation.py)."""

from __future__ import annotations

import json
import uuid

import asyncpg

from engram.db import creation, identity, write_context
from engram.db.pool import tenant_tx
from engram.domain.models import CallerContext
from tests.support.tenants import create_tenant


async def test_the_context_holds_the_kind_workspace_role_trust_clock_and_ttl_overrides(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, tenant: CallerContext
) -> None:
    await identity.merge_tenant_config(app_pool, tenant.tenant_id, {"ttl_days": {"fact": 30}}, tenant.principal_id)
    trusted = await identity.create_principal(app_pool, tenant.tenant_id, "trusted one", "agent", trusted=True)
    async with tenant_tx(app_pool, tenant.tenant_id) as conn:
        default = await conn.fetchval("SELECT id FROM workspaces WHERE name = 'default'")
        mine = await write_context.load(conn, "fact", None, tenant.principal_id)
        theirs = await write_context.load(conn, "preference", str(default), trusted)
        started = await conn.fetchval("SELECT now()")
        unknown = await write_context.load(conn, "no_such_kind", None, tenant.principal_id)
    assert mine.kind is not None and mine.kind.name == "fact" and mine.kind.enabled
    assert mine.workspace_id == str(default) and mine.role == "member"
    assert mine.trusted is False and mine.now == started
    assert mine.ttl_days == {"fact": 30}
    assert theirs.kind is not None and theirs.kind.name == "preference" and theirs.kind.singleton
    assert theirs.trusted is True and theirs.workspace_id == str(default)
    assert unknown.kind is None and unknown.workspace_id == str(default)


async def test_another_tenants_workspace_has_no_role_and_the_tenants_own_settings_stay_its_own(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, tenant: CallerContext
) -> None:
    other = await create_tenant(owner_pool)
    await identity.merge_tenant_config(app_pool, other.tenant_id, {"ttl_days": {"fact": 1}}, other.principal_id)
    async with tenant_tx(app_pool, other.tenant_id) as conn:
        foreign = await conn.fetchval("SELECT id FROM workspaces WHERE name = 'default'")
    async with tenant_tx(app_pool, tenant.tenant_id) as conn:
        context = await write_context.load(conn, "fact", str(foreign), tenant.principal_id)
        missing = await write_context.load(conn, "fact", str(uuid.uuid4()), tenant.principal_id)
    assert context.workspace_id == str(foreign) and context.role is None  # RLS hides the membership
    assert context.ttl_days is None  # the other tenant's overrides are not read
    assert missing.role is None


async def test_creation_writes_the_audit_row_pending_stages_and_outbox_row_of_a_new_memory(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, tenant: CallerContext
) -> None:
    item_id, event_id = uuid.uuid4(), str(uuid.uuid4())
    async with tenant_tx(app_pool, tenant.tenant_id) as conn:
        workspace = await conn.fetchval("SELECT id FROM workspaces WHERE name = 'default'")
        await conn.execute(
            "INSERT INTO memory_items (tenant_id, id, workspace_id, principal_id, content, content_hash, kind, "
            "importance, review_status, authority, source_type, source_trust) "
            "VALUES ($1, $2, $3, $4, 'a note', '\\x01'::bytea, 'fact', 0.5, 'active', 50, 'explicit', 1.0)",
            tenant.tenant_id,
            item_id,
            workspace,
            tenant.principal_id,
        )
        await creation.record(
            conn,
            tenant_id=tenant.tenant_id,
            item_id=item_id,
            actor_id=tenant.principal_id,
            audit_value={"kind": "fact"},
            request_id="req-1",
            stages=["embedding", "classification"],
            event_id=event_id,
            subject="engram.events.x.memory.created",
            envelope={"id": event_id},
        )
    async with owner_pool.acquire() as conn:
        audit = await conn.fetch("SELECT action, new_value, request_id FROM item_events WHERE item_id = $1", item_id)
        stages = await conn.fetch("SELECT stage, status FROM item_stages WHERE item_id = $1 ORDER BY stage", item_id)
        queued = await conn.fetchrow("SELECT subject, envelope FROM outbox WHERE event_id = $1", uuid.UUID(event_id))
    assert [(r["action"], json.loads(r["new_value"]), r["request_id"]) for r in audit] == [
        ("created", {"kind": "fact"}, "req-1")
    ]
    assert [(r["stage"], r["status"]) for r in stages] == [("classification", "pending"), ("embedding", "pending")]
    assert queued is not None and queued["subject"] == "engram.events.x.memory.created"
    assert json.loads(queued["envelope"]) == {"id": event_id}
