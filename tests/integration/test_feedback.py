"""Feedback through REST: one current verdict per principal and item, history kept, importance moved,
the anti-feedback counter reset, a daily allowance, and the feedback.recorded event."""

from __future__ import annotations

import asyncpg
import httpx
import pytest

from engram.db import identity
from tests.support.outbox import outbox_envelopes
from tests.support.tenants import create_tenant


async def test_verdicts_history_importance_and_allowance(
    gateway: httpx.AsyncClient, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    base = await create_tenant(owner_pool)
    issued = await identity.create_key(app_pool, base.tenant_id, base.principal_id, ["admin"], "admin")
    admin = {"authorization": f"Bearer {issued.key}"}
    item = (
        await gateway.post("/v1/remember", json={"content": "The build cache lives on the NFS share."}, headers=admin)
    ).json()
    async with owner_pool.acquire() as conn:
        await conn.execute("UPDATE memory_items SET recalls_since_useful = 7 WHERE id = $1::uuid", item["id"])

    useful = await gateway.post("/v1/feedback", json={"item_id": item["id"], "verdict": "useful"}, headers=admin)
    assert useful.status_code == 200 and useful.json() == {
        "item_id": item["id"],
        "verdict": "useful",
        "previous": None,
        "importance": pytest.approx(0.55),
    }
    again = await gateway.post("/v1/feedback", json={"item_id": item["id"], "verdict": "useful"}, headers=admin)
    assert again.json()["importance"] == pytest.approx(0.55) and again.json()["previous"] == "useful"
    noise = await gateway.post("/v1/feedback", json={"item_id": item["id"], "verdict": "noise"}, headers=admin)
    assert noise.json()["importance"] == pytest.approx(0.40) and noise.json()["previous"] == "useful"
    async with owner_pool.acquire() as conn:
        history = await conn.fetch(
            "SELECT verdict FROM feedback_events WHERE item_id = $1::uuid ORDER BY id", item["id"]
        )
        counter = await conn.fetchval("SELECT recalls_since_useful FROM memory_items WHERE id = $1::uuid", item["id"])
    assert [r["verdict"] for r in history] == ["useful", "noise"] and counter == 0  # a repeat is not recorded
    event = (await outbox_envelopes(owner_pool, types=["feedback.recorded"], subjects=[item["id"]]))[-1]
    assert event["data"]["verdict"] == "noise"
    current = (await gateway.get(f"/v1/items/{item['id']}", headers=admin)).json()
    assert current["importance"] == pytest.approx(0.40)

    for body, field in (
        ({"item_id": item["id"], "verdict": "meh"}, "verdict"),
        ({"item_id": "nope", "verdict": "useful"}, "item_id"),
        ({"item_id": item["id"], "verdict": "useful", "recall_id": "x"}, "recall_id"),
    ):
        refused = await gateway.post("/v1/feedback", json=body, headers=admin)
        assert refused.status_code == 422 and refused.json()["field"] == field, body

    limit = await gateway.patch("/v1/admin/tenant-config", json={"feedback_daily_limit": 2}, headers=admin)
    assert limit.status_code == 200
    over = await gateway.post("/v1/feedback", json={"item_id": item["id"], "verdict": "useful"}, headers=admin)
    assert over.status_code == 429 and over.json()["code"] == "rate_limited"
    assert 86_000 <= int(over.headers["retry-after"]) <= 86_400  # the oldest verdict ages out in about a day

    gone = await gateway.post(f"/v1/items/{item['id']}/invalidate", json={"reason": "stale"}, headers=admin)
    assert gone.status_code == 200
    refused = await gateway.post("/v1/feedback", json={"item_id": item["id"], "verdict": "noise"}, headers=admin)
    assert refused.status_code == 409 and refused.json()["code"] == "invalidated"


async def test_feedback_on_an_invisible_item_is_404(
    gateway: httpx.AsyncClient, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    mine, theirs = await create_tenant(owner_pool), await create_tenant(owner_pool)
    key = await identity.create_key(app_pool, mine.tenant_id, mine.principal_id, ["read", "write"], "mine")
    other = await identity.create_key(app_pool, theirs.tenant_id, theirs.principal_id, ["read", "write"], "theirs")
    item = (
        await gateway.post(
            "/v1/remember", json={"content": "A memory of mine."}, headers={"authorization": f"Bearer {key.key}"}
        )
    ).json()
    refused = await gateway.post(
        "/v1/feedback",
        json={"item_id": item["id"], "verdict": "noise"},
        headers={"authorization": f"Bearer {other.key}"},
    )
    assert refused.status_code == 404
    unchanged = await gateway.get(f"/v1/items/{item['id']}", headers={"authorization": f"Bearer {key.key}"})
    assert unchanged.json()["importance"] == pytest.approx(0.5)
