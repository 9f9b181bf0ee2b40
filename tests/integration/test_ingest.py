"""Ingest against a real database: one transaction writes item, audit row, stage and outbox row."""

from __future__ import annotations

import json

import asyncpg
import pytest

from engram.config import Settings
from engram.domain.models import CallerContext
from engram.errors import ValidationFailed
from services.ingest.service import IngestService, RememberCommand
from tests.support.tenants import create_tenant


async def _counts(owner_pool: asyncpg.Pool, tenant_id: str) -> dict[str, int]:
    async with owner_pool.acquire() as conn:
        return {
            t: await conn.fetchval(f"SELECT count(*) FROM {t} WHERE tenant_id = $1::uuid", tenant_id)
            for t in ("memory_items", "item_events", "outbox", "item_stages")
        }


async def test_remember_writes_item_audit_stage_and_outbox_together(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext
) -> None:
    service = IngestService(app_pool, settings)
    result = await service.remember(
        tenant, RememberCommand(content="The staging database runs on port 6543.", kind="fact", tags=["infra", "infra"])
    )
    assert result.status == "created"
    item = result.item
    assert item.review_status == "active" and item.authority == 50 and item.source_type == "explicit"
    assert item.importance == pytest.approx(0.5) and item.tags == ["infra"]
    assert await _counts(owner_pool, tenant.tenant_id) == {
        "memory_items": 1,
        "item_events": 1,
        "outbox": 1,
        "item_stages": 3,
    }
    async with owner_pool.acquire() as conn:
        row = await conn.fetchrow("SELECT subject, envelope FROM outbox WHERE tenant_id = $1::uuid", tenant.tenant_id)
        event = await conn.fetchrow("SELECT action, actor_id, request_id FROM item_events WHERE item_id = $1", item.id)
    envelope = json.loads(row["envelope"])
    assert row["subject"] == f"{settings.events_subject_prefix}.{tenant.tenant_id}.memory.created"
    assert envelope["type"] == "engram.memory.created" and envelope["subject"] == str(item.id)
    assert "port 6543" not in row["envelope"], "events must not carry content"
    assert event["action"] == "created" and str(event["actor_id"]) == tenant.principal_id
    assert event["request_id"] == tenant.request_id


async def test_same_content_twice_is_deduplicated(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext
) -> None:
    service = IngestService(app_pool, settings)
    first = await service.remember(tenant, RememberCommand(content="Alice prefers green tea."))
    second = await service.remember(tenant, RememberCommand(content="  alice PREFERS   green tea. "))
    assert (first.status, second.status) == ("created", "deduplicated")
    assert second.item.id == first.item.id
    assert (await _counts(owner_pool, tenant.tenant_id))["memory_items"] == 1


async def test_requires_review_kind_starts_proposed_and_agents_carry_less_authority(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings
) -> None:
    agent = await create_tenant(owner_pool, principal_type="agent")
    service = IngestService(app_pool, settings)
    doctrine = await service.remember(agent, RememberCommand(content="Never deploy on Fridays.", kind="doctrine"))
    fact = await service.remember(agent, RememberCommand(content="Deploys take ten minutes.", kind="fact"))
    assert doctrine.item.review_status == "proposed"
    assert fact.item.review_status == "active"
    assert doctrine.item.authority == fact.item.authority == 20 and fact.item.source_type == "agent"


@pytest.mark.parametrize(
    ("command", "field"),
    [
        (RememberCommand(content="   "), "content"),
        (RememberCommand(content="x" * 20_000), "content"),
        (RememberCommand(content="fine", kind="gossip"), "kind"),
        (RememberCommand(content="fine", importance=1.5), "importance"),
        (RememberCommand(content="fine", importance=-0.1), "importance"),
        (RememberCommand(content="fine", visibility="everyone"), "visibility"),
        (RememberCommand(content="fine", source_type="rumour"), "source_type"),
        (RememberCommand(content="fine", tags=[""]), "tags"),
        (RememberCommand(content="fine", workspace_id="not-a-uuid"), "workspace_id"),
    ],
)
async def test_bad_input_names_the_field_and_writes_nothing(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    command: RememberCommand,
    field: str,
) -> None:
    service = IngestService(app_pool, settings)
    await service.remember(tenant, RememberCommand(content="a memory that is already there"))
    before = await _counts(owner_pool, tenant.tenant_id)
    with pytest.raises(ValidationFailed) as caught:
        await service.remember(tenant, command)
    assert caught.value.field == field
    assert await _counts(owner_pool, tenant.tenant_id) == before


async def test_unknown_kind_lists_the_known_ones(
    app_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext
) -> None:
    with pytest.raises(ValidationFailed, match=r"known kinds: .*preference"):
        await IngestService(app_pool, settings).remember(tenant, RememberCommand(content="x", kind="gossip"))
