"""The memory-quality metrics move with what happens, through the real gateway, ingest and recall: the inventory
gauges count memories by kind and review status (a tenant's own kind as ``custom``), the open pipeline stages
and the review queue's age; recall counts empty answers; feedback counts verdicts. Each check reads the change
a step makes, since other tests share the database and the registry."""

from __future__ import annotations

import asyncpg
import httpx
from prometheus_client import REGISTRY

from engram.config import Settings
from engram.db import identity
from services.ingest.inventory import refresh
from tests.support.tenants import create_tenant


def sample(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


def series(name: str) -> list[dict[str, str]]:
    return [s.labels for family in REGISTRY.collect() for s in family.samples if s.name == name]


async def admin_headers(app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool) -> tuple[str, dict[str, str]]:
    base = await create_tenant(owner_pool)
    issued = await identity.create_key(app_pool, base.tenant_id, base.principal_id, ["admin"], "admin")
    return base.tenant_id, {"authorization": f"Bearer {issued.key}"}


async def test_the_inventory_counts_kinds_statuses_open_stages_and_the_review_queue(
    gateway: httpx.AsyncClient, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings
) -> None:
    await refresh(app_pool, settings)
    facts = sample("engram_items", {"kind": "fact", "review_status": "active"})
    custom = sample("engram_items", {"kind": "custom", "review_status": "proposed"})
    embedding_queue = sample("engram_pipeline_items", {"stage": "embedding", "status": "pending"})
    proposals = sample("engram_proposals_pending")

    tenant_id, admin = await admin_headers(app_pool, owner_pool)
    made = await gateway.post("/v1/admin/kinds", json={"name": "incident_note", "requires_review": True}, headers=admin)
    assert made.status_code == 201, made.text
    written = [
        await gateway.post("/v1/remember", json=body, headers=admin)
        for body in (
            {"content": "The billing export runs at 02:00 UTC.", "kind": "fact"},
            {"content": "Grafana lives on port 3000 in staging.", "kind": "fact"},
            {"content": "Paging fired twice for the disk alert on db-3.", "kind": "incident_note"},
        )
    ]
    assert all(w.status_code == 201 for w in written), [w.text for w in written]
    assert written[2].json()["review_status"] == "proposed"
    invalidated = await gateway.post(
        "/v1/remember", json={"content": "The old VPN endpoint is vpn1.", "kind": "fact"}, headers=admin
    )
    gone = await gateway.post(
        f"/v1/items/{invalidated.json()['id']}/invalidate", json={"reason": "decommissioned"}, headers=admin
    )
    assert gone.status_code == 200, gone.text
    async with owner_pool.acquire() as conn:  # the proposal has waited two hours
        await conn.execute(
            "UPDATE memory_items SET created_at = now() - interval '2 hours' WHERE id = $1::uuid",
            written[2].json()["id"],
        )

    await refresh(app_pool, settings.model_copy(update={"metrics_tenant_limit": 100_000}))
    assert sample("engram_items", {"kind": "fact", "review_status": "active"}) == facts + 2  # not the invalidated
    assert sample("engram_items", {"kind": "custom", "review_status": "proposed"}) == custom + 1
    assert not [labels for labels in series("engram_items") if labels["kind"] == "incident_note"]
    # no embedder runs beside this gateway: every memory written here waits for its vector
    assert sample("engram_pipeline_items", {"stage": "embedding", "status": "pending"}) >= embedding_queue + 3
    assert sample("engram_proposals_pending") == proposals + 1
    assert sample("engram_proposal_oldest_age_seconds") >= 2 * 3600
    assert sample("engram_tenant_items", {"tenant": tenant_id}) == 3
    assert sample("engram_inventory_timestamp_seconds") > 0

    await refresh(app_pool, settings.model_copy(update={"metrics_tenant_limit": 1}))
    assert series("engram_tenant_items") == []  # more tenants than the limit: no series per tenant at all


async def test_recall_counts_empty_answers_and_feedback_counts_verdicts(
    gateway: httpx.AsyncClient, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    _, admin = await admin_headers(app_pool, owner_pool)
    item = (
        await gateway.post("/v1/remember", json={"content": "The nightly backup goes to bucket nb-7."}, headers=admin)
    ).json()
    hits = {"operation": "recall", "mode": "keyword", "result": "hits"}
    empty = {"operation": "recall", "mode": "keyword", "result": "empty"}
    before = {
        "hits": sample("engram_recall_requests_total", hits),
        "empty": sample("engram_recall_requests_total", empty),
    }

    found = await gateway.post("/v1/recall", json={"query": "nightly backup", "mode": "keyword"}, headers=admin)
    assert found.status_code == 200 and found.json()["items"]
    assert sample("engram_recall_requests_total", hits) == before["hits"] + 1
    assert sample("engram_recall_requests_total", empty) == before["empty"]
    nothing = await gateway.post("/v1/recall", json={"query": "zeppelin hangar", "mode": "keyword"}, headers=admin)
    assert nothing.status_code == 200 and not nothing.json()["items"]
    assert sample("engram_recall_requests_total", empty) == before["empty"] + 1
    searched = {"operation": "search", "mode": "keyword", "result": "empty"}
    searches = sample("engram_recall_requests_total", searched)
    assert (
        await gateway.post("/v1/search", json={"query": "zeppelin", "mode": "keyword"}, headers=admin)
    ).status_code == 200
    assert sample("engram_recall_requests_total", searched) == searches + 1

    useful, noise = (
        sample("engram_feedback_total", {"verdict": "useful"}),
        sample("engram_feedback_total", {"verdict": "noise"}),
    )
    for verdict in ("useful", "useful", "noise"):  # the repeat is not a new verdict
        given = await gateway.post("/v1/feedback", json={"item_id": item["id"], "verdict": verdict}, headers=admin)
        assert given.status_code == 200, given.text
    assert sample("engram_feedback_total", {"verdict": "useful"}) == useful + 1
    assert sample("engram_feedback_total", {"verdict": "noise"}) == noise + 1
