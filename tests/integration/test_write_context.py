"""What a write reads in its one query before it stores (engram/db/write_context.py), and the rows a new
memory brings in its one statement (engram/db/creation.py)."""

from __future__ import annotations

import dataclasses
import json
import uuid

import asyncpg
import pytest
from prometheus_client import REGISTRY

from engram.config import Settings
from engram.db import creation, identity, items, write_context
from engram.db.pool import create_pool, tenant_tx
from engram.domain.models import CallerContext
from services.ingest.service import IngestService, RememberCommand
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


def _new_item(tenant: CallerContext, workspace: str) -> items.NewItem:
    return items.NewItem(
        id=uuid.uuid4(),
        tenant_id=tenant.tenant_id,
        workspace_id=workspace,
        principal_id=tenant.principal_id,
        content="a note",
        content_hash=b"\x01",
        kind="fact",
        importance=0.5,
        review_status="active",
        authority=50,
        source_type="explicit",
        source_trust=1.0,
        subject=None,
        wing=None,
        room=None,
        tags=[],
        pinned=False,
        visibility="workspace",
        source_uri=None,
        source_session=None,
        valid_from=None,
        valid_to=None,
        expires_at=None,
        external_id=None,
        metadata={},
    )


async def test_creation_writes_the_item_its_audit_row_pending_stages_and_outbox_row_in_one_statement(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, tenant: CallerContext
) -> None:
    event_id, again_id = str(uuid.uuid4()), str(uuid.uuid4())
    sent: list[str] = []
    async with tenant_tx(app_pool, tenant.tenant_id) as conn:
        workspace = str(await conn.fetchval("SELECT id FROM workspaces WHERE name = 'default'"))
        new = _new_item(tenant, workspace)

        def log(record: asyncpg.connection.LoggedQuery) -> None:
            sent.append(record.query)

        conn.add_query_logger(log)
        stored = await creation.insert(
            conn,
            new,
            actor_id=tenant.principal_id,
            audit_value={"kind": "fact"},
            request_id="req-1",
            stages=["embedding", "classification"],
            event_id=event_id,
            subject="engram.events.x.memory.created",
            envelope={"id": event_id},
        )
        # the same content again: a live item holds it, so nothing at all is written
        again = await creation.insert(
            conn,
            _new_item(tenant, workspace),
            actor_id=tenant.principal_id,
            audit_value={"kind": "fact"},
            request_id="req-2",
            stages=["embedding"],
            event_id=again_id,
            subject="engram.events.x.memory.created",
            envelope={"id": again_id},
        )
        conn.remove_query_logger(log)
        started = await conn.fetchval("SELECT now()")
    assert len(sent) == 2  # one statement each
    assert stored is not None and stored.id == new.id and stored.content == "a note" and stored.created_at == started
    assert again is None
    async with owner_pool.acquire() as conn:
        audit = await conn.fetch("SELECT action, new_value, request_id FROM item_events WHERE item_id = $1", new.id)
        stages = await conn.fetch("SELECT stage, status FROM item_stages WHERE item_id = $1 ORDER BY stage", new.id)
        queued = await conn.fetchrow("SELECT subject, envelope FROM outbox WHERE event_id = $1", uuid.UUID(event_id))
        queued_again = await conn.fetchval("SELECT count(*) FROM outbox WHERE event_id = $1", uuid.UUID(again_id))
    assert [(r["action"], json.loads(r["new_value"]), r["request_id"]) for r in audit] == [
        ("created", {"kind": "fact"}, "req-1")
    ]
    assert [(r["stage"], r["status"]) for r in stages] == [("classification", "pending"), ("embedding", "pending")]
    assert queued is not None and queued["subject"] == "engram.events.x.memory.created"
    assert json.loads(queued["envelope"]) == {"id": event_id}
    assert queued_again == 0


async def test_a_plain_remember_is_four_statements_and_writes_in_one(
    migrated: str, settings: Settings, tenant: CallerContext
) -> None:
    """begin with the tenant, the write context with possible_supersedes' window, the item with its rows and the
    scores of its first candidates, commit — also when it has candidates to score."""
    pool = await create_pool(migrated, role=settings.app_role, min_size=1, max_size=1)
    sent: list[str] = []
    try:
        service = IngestService(pool, settings)
        # first remembers, one with a candidate: asyncpg reads the types its statements use once per connection
        await service.remember(tenant, RememberCommand(content="The nightly backup runs at two."))
        await service.remember(tenant, RememberCommand(content="The nightly backup now runs at three."))
        async with pool.acquire() as conn:  # the pool's one connection: the logger stays on it
            conn.add_query_logger(lambda record: sent.append(record.query))
        searched = _stage_count("possible_supersedes")
        result = await service.remember(tenant, RememberCommand(content="The build cache lives on the second disk."))
        plain = list(sent)
        sent.clear()
        near = await service.remember(tenant, RememberCommand(content="The build cache now lives on the third disk."))
    finally:
        await pool.close()
    assert result.status == "created" and near.status == "created"
    assert _stage_count("possible_supersedes") == searched + 2  # one observation a remember, in two parts
    assert [s.id for s in near.possible_supersedes] == [str(result.item.id)]  # scored in the insert statement
    for statements in (plain, sent):
        writes = [q for q in statements if "INSERT" in q or "UPDATE" in q or "DELETE" in q]
        assert len(writes) == 1
        assert all(
            f"INSERT INTO {table}" in writes[0] for table in ("memory_items", "item_events", "item_stages", "outbox")
        )
        assert len(statements) == 4, statements
        assert statements[0] == f"BEGIN; SELECT set_config('app.tenant_id', '{tenant.tenant_id}', true)"
        assert statements[-1] == "COMMIT"


def _stage_count(stage: str) -> float:
    return REGISTRY.get_sample_value("engram_remember_stage_seconds_count", {"stage": stage}) or 0.0


async def test_an_error_scoring_candidates_in_the_insert_statement_writes_nothing(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, tenant: CallerContext
) -> None:
    """The candidates' scores share the item's statement: when scoring fails, no item, audit row, stage or
    outbox row is written."""
    event_id = str(uuid.uuid4())
    async with tenant_tx(app_pool, tenant.tenant_id) as conn:
        workspace = str(await conn.fetchval("SELECT id FROM workspaces WHERE name = 'default'"))
        existing = await creation.insert(
            conn,
            _new_item(tenant, workspace),
            actor_id=tenant.principal_id,
            audit_value={},
            request_id=None,
            stages=["embedding"],
            event_id=str(uuid.uuid4()),
            subject="engram.events.x.memory.created",
            envelope={},
        )
    assert existing is not None
    new = dataclasses.replace(_new_item(tenant, workspace), content="a note, again", content_hash=b"\x02")
    broken = items.Among("a note, again", "fact", tenant.principal_id, [existing.id], [str(new.id)], 0.3, limit=-1)
    with pytest.raises(asyncpg.InvalidRowCountInLimitClauseError):  # raised by PostgreSQL, scoring
        async with tenant_tx(app_pool, tenant.tenant_id) as conn:
            await creation.insert_scoring(
                conn,
                new,
                actor_id=tenant.principal_id,
                audit_value={},
                request_id=None,
                stages=["embedding"],
                event_id=event_id,
                subject="engram.events.x.memory.created",
                envelope={},
                among=broken,
            )
    async with owner_pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM memory_items WHERE id = $1", new.id) == 0
        assert await conn.fetchval("SELECT count(*) FROM item_events WHERE item_id = $1", new.id) == 0
        assert await conn.fetchval("SELECT count(*) FROM item_stages WHERE item_id = $1", new.id) == 0
        assert await conn.fetchval("SELECT count(*) FROM outbox WHERE event_id = $1", uuid.UUID(event_id)) == 0
    async with tenant_tx(app_pool, tenant.tenant_id) as conn:  # the same, well formed: written and scored
        stored, similar = await creation.insert_scoring(
            conn,
            new,
            actor_id=tenant.principal_id,
            audit_value={},
            request_id=None,
            stages=["embedding"],
            event_id=event_id,
            subject="engram.events.x.memory.created",
            envelope={},
            among=dataclasses.replace(broken, limit=5),
        )
    assert stored is not None and [(s.id, s.content) for s in similar] == [(str(existing.id), "a note")]
