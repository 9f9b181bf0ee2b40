"""Promotion through its consumer, the sweep, the admin API, the CLI and the readiness report."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import asyncpg
import httpx
import pytest_asyncio

from engram.config import Settings
from engram.db import identity
from engram.pipeline import promotion
from services.classifier.service import ClassifierService
from services.promotion.service import PromotionService
from tests.support.outbox import deliver, outbox_events
from tests.support.tenants import create_tenant

Headers = dict[str, str]
FAST = {"min_age_minutes": 0, "kinds": {"meeting_note": "auto"}}


@pytest_asyncio.fixture
async def tenant(app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, gateway: httpx.AsyncClient) -> dict[str, Any]:
    base = await create_tenant(owner_pool)
    issued = await identity.create_key(app_pool, base.tenant_id, base.principal_id, ["read", "write", "admin"], "t")
    who = {"authorization": f"Bearer {issued.key}"}
    created = await gateway.post("/v1/admin/kinds", json={"name": "meeting_note", "requires_review": True}, headers=who)
    assert created.status_code == 201
    return {"id": base.tenant_id, "who": who}


async def _propose(gateway: httpx.AsyncClient, who: Headers, content: str) -> str:
    response = await gateway.post("/v1/remember", json={"content": content, "kind": "meeting_note"}, headers=who)
    assert response.status_code == 201 and response.json()["review_status"] == "proposed", response.text
    return response.json()["id"]  # type: ignore[no-any-return]


async def _classify(owner_pool: asyncpg.Pool, app_pool: asyncpg.Pool, settings: Settings, *ids: str) -> None:
    assert (
        await deliver(owner_pool, ClassifierService(app_pool, settings).handle, types=["memory.created"], subjects=ids)
        == {}
    )


async def _status(gateway: httpx.AsyncClient, who: Headers, item_id: str) -> str:
    return (await gateway.get(f"/v1/items/{item_id}", headers=who)).json()["review_status"]  # type: ignore[no-any-return]


async def test_a_classified_proposal_is_promoted_once_every_gate_passes(
    gateway: httpx.AsyncClient,
    tenant: dict[str, Any],
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
) -> None:
    who = tenant["who"]
    item = await _propose(gateway, who, "Agreed to rotate the on-call weekly.")
    ready = (await gateway.get(f"/v1/items/{item}/promotion-readiness", headers=who)).json()
    assert ready["ready"] is False
    assert [b["code"] for b in ready["blockers"]] == ["kind_manual", "age", "unclassified"]
    assert ready["gates"]["min_age_minutes"] == 10

    assert (await gateway.patch("/v1/admin/tenant-config", json={"promotion": FAST}, headers=who)).status_code == 200
    await _classify(owner_pool, app_pool, settings, item)
    ready = (await gateway.get(f"/v1/items/{item}/promotion-readiness", headers=who)).json()
    assert ready == {**ready, "ready": True, "blockers": []}
    service = PromotionService(app_pool, settings)
    [classified] = await outbox_events(owner_pool, types=["memory.classified"], subjects=[item])
    assert await service.handle([classified]) == {}
    assert await _status(gateway, who, item) == "active"
    trail = (await gateway.get(f"/v1/items/{item}/events", headers=who)).json()["events"]
    assert trail[-1]["action"] == "review.promote" and trail[-1]["actor_id"] is None
    [changed] = await outbox_events(owner_pool, types=["memory.review_changed"], subjects=[item])
    assert changed.data["by"] == "promotion" and changed.data["to"] == "active"
    assert await service.handle([classified, changed]) == {}  # a redelivery and its own event: no change
    async with owner_pool.acquire() as conn:
        promoted = await conn.fetchval(
            "SELECT count(*) FROM item_events WHERE item_id = $1 AND action = 'review.promote'", item
        )
    assert promoted == 1
    stages = (await gateway.get(f"/v1/items/{item}/status", headers=who)).json()["stages"]
    assert [(s["name"], s["status"]) for s in stages][-1] == ("promotion", "done")


async def test_dry_runs_report_the_same_decisions_and_write_nothing(
    gateway: httpx.AsyncClient,
    tenant: dict[str, Any],
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
) -> None:
    who = tenant["who"]
    assert (await gateway.patch("/v1/admin/tenant-config", json={"promotion": FAST}, headers=who)).status_code == 200
    good = await _propose(gateway, who, "Decided to archive the legacy wiki.")
    chatter = await _propose(gateway, who, "ok thanks")
    pending = await _propose(gateway, who, "Agreed the roadmap review moves to Thursdays.")
    await _classify(owner_pool, app_pool, settings, good, chatter)
    expected = {"promoted": 1, "skipped_noise": 1, "skipped_unclassified": 1}

    dry = await gateway.post("/v1/admin/promote", json={"dry_run": True}, headers=who)
    assert dry.status_code == 200 and dry.json()["counts"] == expected and dry.json()["dry_run"] is True
    assert [await _status(gateway, who, i) for i in (good, chatter, pending)] == ["proposed"] * 3
    cli = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "engram.cli",
        "promote-proposed",
        "--tenant",
        tenant["id"],
        "--dry-run",
        env={**os.environ, "ENGRAM_DATABASE_URL": settings.database_url or ""},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await cli.communicate()
    assert cli.returncode == 0, err.decode()
    assert json.loads(out) == {"counts": expected, "decided": 3, "dry_run": True}
    assert [await _status(gateway, who, i) for i in (good, chatter, pending)] == ["proposed"] * 3

    real = await gateway.post("/v1/admin/promote", json={"dry_run": False}, headers=who)
    assert real.json()["counts"] == expected
    assert [await _status(gateway, who, i) for i in (good, chatter, pending)] == ["active", "proposed", "proposed"]
    blocked = (await gateway.get(f"/v1/items/{chatter}/promotion-readiness", headers=who)).json()
    codes = [b["code"] for b in blocked["blockers"]]
    # noise first; a chatter message's kind confidence (its kind among the others) may or may not be low too
    assert codes[0] == "noise" and set(codes) <= {"noise", "confidence"}
    bad = await gateway.patch("/v1/admin/tenant-config", json={"promotion": {"kinds": {"x": "yes"}}}, headers=who)
    assert bad.status_code == 422 and bad.json()["field"] == "promotion"


async def test_the_sweep_walks_proposals_in_bounded_passes_with_a_cursor(
    gateway: httpx.AsyncClient,
    tenant: dict[str, Any],
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
) -> None:
    who = tenant["who"]
    assert (await gateway.patch("/v1/admin/tenant-config", json={"promotion": FAST}, headers=who)).status_code == 200
    ids = [await _propose(gateway, who, f"Decided to retire service number {n}.") for n in range(3)]
    await _classify(owner_pool, app_pool, settings, *ids)
    await promotion.sweep(app_pool, settings.events_subject_prefix, batch=2)
    async with owner_pool.acquire() as conn:
        cursor = await conn.fetchval("SELECT last_id FROM promotion_cursors WHERE tenant_id = $1", tenant["id"])
    assert [await _status(gateway, who, i) for i in ids] == ["active", "active", "proposed"]
    assert str(cursor) == ids[1]
    await promotion.sweep(app_pool, settings.events_subject_prefix, batch=2)
    assert await _status(gateway, who, ids[2]) == "active"
    async with owner_pool.acquire() as conn:  # the end of the list: the next pass starts over
        assert await conn.fetchval("SELECT count(*) FROM promotion_cursors WHERE tenant_id = $1", tenant["id"]) == 0


async def test_a_proposal_a_reviewer_decides_leaves_nothing_pending_for_promotion(
    gateway: httpx.AsyncClient, tenant: dict[str, Any]
) -> None:
    who = tenant["who"]
    item = await _propose(gateway, who, "Agreed to move the retro to Mondays.")
    stages = (await gateway.get(f"/v1/items/{item}/status", headers=who)).json()["stages"]
    assert next(s for s in stages if s["name"] == "promotion")["status"] == "pending"
    reviewer = await gateway.post(f"/v1/items/{item}/review", json={"action": "activate"}, headers=who)
    assert reviewer.status_code == 200, reviewer.text
    stages = (await gateway.get(f"/v1/items/{item}/status", headers=who)).json()["stages"]
    promotion_stage = next(s for s in stages if s["name"] == "promotion")
    assert promotion_stage["status"] == "done" and promotion_stage["detail"] == "active by review (activate)"


async def test_on_an_event_only_a_proposal_is_decided(
    gateway: httpx.AsyncClient,
    tenant: dict[str, Any],
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
) -> None:
    who = tenant["who"]
    active = await gateway.post("/v1/remember", json={"content": "The standup moved to 9:30."}, headers=who)
    assert active.status_code == 201 and active.json()["review_status"] == "active"
    blocked = await _propose(gateway, who, "Agreed to rotate the on-call weekly.")  # kind_manual, age: blocked
    ids = [active.json()["id"], blocked]
    await _classify(owner_pool, app_pool, settings, *ids)
    events = await outbox_events(owner_pool, types=["memory.classified"], subjects=ids)
    assert len(events) == 2
    assert await PromotionService(app_pool, settings).handle(events) == {}
    async with owner_pool.acquire() as conn:
        stages = dict(
            await conn.fetch(
                "SELECT item_id::text, detail FROM item_stages WHERE stage = 'promotion' AND item_id = ANY($1::uuid[])",
                ids,
            )
        )
        handled = await conn.fetchval(
            "SELECT count(*) FROM consumer_inbox WHERE consumer = 'promotion' AND event_id = ANY($1::uuid[])",
            [e.id for e in events],
        )
    assert list(stages) == [blocked] and "review" in stages[blocked]  # the proposal's blockers, nothing for the other
    assert handled == 2
    assert await _status(gateway, who, ids[0]) == "active" and await _status(gateway, who, blocked) == "proposed"
