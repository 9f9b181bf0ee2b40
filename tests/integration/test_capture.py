"""The cheap capture paths through REST (real servers, database and model): POST /v1/observe and what the
pipeline does with an observation, and POST /v1/remember/batch with its per-memory results."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import pytest

from engram.config import Settings
from engram.domain.models import CallerContext
from engram.embeddings.provider import EmbeddingProvider
from services.classifier.service import ClassifierService
from services.conflicts.service import ConflictsService
from services.embedder.service import EmbedderService
from tests.support.keys import KeyMaker
from tests.support.outbox import deliver, outbox_envelopes


async def _counts(owner_pool: asyncpg.Pool, tenant_id: str) -> dict[str, int]:
    async with owner_pool.acquire() as conn:
        return {
            t: await conn.fetchval(f"SELECT count(*) FROM {t} WHERE tenant_id = $1::uuid", tenant_id)
            for t in ("memory_items", "item_events", "outbox")
        }


async def _stages(owner_pool: asyncpg.Pool, item_id: str) -> dict[str, tuple[str, str | None]]:
    rows = await owner_pool.fetch("SELECT stage, status, detail FROM item_stages WHERE item_id = $1::uuid", item_id)
    return {r["stage"]: (r["status"], r["detail"]) for r in rows}


async def _search(gateway: httpx.AsyncClient, auth: dict[str, str], query: str) -> list[dict[str, Any]]:
    response = await gateway.post("/v1/search", json={"query": query, "mode": "keyword"}, headers=auth)
    assert response.status_code == 200, response.text
    return [hit["item"] for hit in response.json()["items"]]


async def test_an_observation_is_keyword_searchable_at_once_and_expires_after_the_default_ttl(
    gateway: httpx.AsyncClient, make_key: KeyMaker, tenant: CallerContext, owner_pool: asyncpg.Pool
) -> None:
    auth = {"authorization": await make_key(tenant)}
    before = datetime.now(UTC)
    response = await gateway.post(
        "/v1/observe",
        json={"content": "The user reran the flaky checkout test twice.", "source_session": "turn-41", "tags": ["ci"]},
        headers=auth,
    )
    assert response.status_code == 201, response.text
    answer = response.json()
    assert set(answer) == {"id", "status", "expires_at"} and answer["status"] == "created"
    expires = datetime.fromisoformat(answer["expires_at"])
    assert before + timedelta(hours=72) - timedelta(minutes=5) <= expires <= datetime.now(UTC) + timedelta(hours=72)
    # found by keyword before any embedder ran: its embedding stage is still pending
    assert await _stages(owner_pool, answer["id"]) == {
        "embedding": ("pending", ""),
        "classification": ("pending", ""),
        "conflict_check": ("pending", ""),
    }
    hits = await _search(gateway, auth, "flaky checkout")
    assert [h["id"] for h in hits] == [answer["id"]]
    item = hits[0]
    assert item["kind"] == "observation" and item["review_status"] == "active" and item["kind_explicit"]
    assert item["source_session"] == "turn-41" and item["tags"] == ["ci"]
    created = await outbox_envelopes(owner_pool, tenant=tenant, types=["memory.created"], subjects=[answer["id"]])
    assert [e["data"]["kind"] for e in created] == ["observation"]
    trail = (await gateway.get(f"/v1/items/{answer['id']}/events", headers=auth)).json()["events"]
    assert [e["action"] for e in trail] == ["created"]

    # the same text again is deduplicated (200) and writes nothing; an explicit expiry is kept
    counts = await _counts(owner_pool, tenant.tenant_id)
    again = await gateway.post(
        "/v1/observe", json={"content": "the user reran the flaky checkout test twice."}, headers=auth
    )
    assert again.status_code == 200 and again.json() == {**answer, "status": "deduplicated"}
    assert await _counts(owner_pool, tenant.tenant_id) == counts
    later = datetime.now(UTC) + timedelta(days=10)
    kept = await gateway.post(
        "/v1/observe", json={"content": "Deploy 812 finished green.", "expires_at": later.isoformat()}, headers=auth
    )
    assert kept.status_code == 201 and datetime.fromisoformat(kept.json()["expires_at"]) == later


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"content": "  "}, "content", "validation_failed"),
        ({"content": "token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"}, "content", "secret_detected"),
        ({"content": "x", "expires_at": "2020-01-01T00:00:00Z"}, "expires_at", "validation_failed"),
        ({"content": "x", "kind": "fact"}, "kind", "validation_failed"),
        ({"content": "x", "source_session": "s" * 201}, "source_session", "validation_failed"),
    ],
)
async def test_a_bad_observation_is_refused_naming_the_field(
    gateway: httpx.AsyncClient,
    make_key: KeyMaker,
    tenant: CallerContext,
    owner_pool: asyncpg.Pool,
    body: dict[str, Any],
    field: str,
    code: str,
) -> None:
    auth = {"authorization": await make_key(tenant)}
    response = await gateway.post("/v1/observe", json=body, headers=auth)
    assert response.status_code == 422 and response.json()["field"] == field and response.json()["code"] == code
    assert (await _counts(owner_pool, tenant.tenant_id))["memory_items"] == 0


async def test_the_pipeline_embeds_an_observation_keeps_its_kind_and_opens_no_conflict(
    gateway: httpx.AsyncClient,
    make_key: KeyMaker,
    tenant: CallerContext,
    owner_pool: asyncpg.Pool,
    app_pool: asyncpg.Pool,
    settings: Settings,
    embedder: EmbeddingProvider,
) -> None:
    auth = {"authorization": await make_key(tenant)}
    # a contradicting pair as observations, and the same pair as facts (the positive control)
    texts = ("We decided that Alice lives in Paris.", "We decided that Alice lives in Berlin.")
    observed = []
    for text in texts:
        response = await gateway.post("/v1/observe", json={"content": text}, headers=auth)
        assert response.status_code == 201, response.text
        observed.append(response.json()["id"])
    facts = []  # (the same text as a live observation of the same author would be deduplicated to it)
    for text in ("We decided that Carol lives in Madrid.", "We decided that Carol lives in Lisbon."):
        response = await gateway.post("/v1/remember", json={"content": text, "kind": "fact"}, headers=auth)
        assert response.status_code == 201, response.text
        facts.append(response.json()["id"])
    everything = [*observed, *facts]
    embed = EmbedderService(app_pool, settings, embedder)
    assert await deliver(owner_pool, embed.handle, types=["memory.created"], subjects=everything) == {}
    classify = ClassifierService(app_pool, settings)
    assert await deliver(owner_pool, classify.handle, types=["memory.created"], subjects=observed) == {}
    conflicts = ConflictsService(app_pool, settings)
    assert await deliver(owner_pool, conflicts.handle, types=["memory.embedded"], subjects=everything) == {}

    for item_id in observed:
        stages = await _stages(owner_pool, item_id)
        assert stages["embedding"][0] == stages["classification"][0] == "done"
        assert stages["conflict_check"] == ("done", "observation is episodic: not compared")
        item = (await gateway.get(f"/v1/items/{item_id}", headers=auth)).json()
        assert item["kind"] == "observation" and item["review_status"] == "active" and item["superseded_by"] is None
        assert item["classified_at"] is not None  # classified, kind kept
    receipt = await owner_pool.fetchval(
        "SELECT output->>'kind' FROM classification_receipts WHERE item_id = $1::uuid", observed[0]
    )
    assert receipt is not None and receipt != "observation"  # the classifier would have chosen another kind
    opened = await owner_pool.fetch("SELECT item_a, item_b FROM conflicts WHERE tenant_id = $1::uuid", tenant.tenant_id)
    pairs = [{str(r["item_a"]), str(r["item_b"])} for r in opened]
    assert pairs == [set(facts)]  # the facts conflict; the observations do not


async def test_a_batch_stores_every_valid_memory_and_reports_each_refused_one(
    gateway: httpx.AsyncClient, make_key: KeyMaker, tenant: CallerContext, owner_pool: asyncpg.Pool
) -> None:
    auth = {"authorization": await make_key(tenant)}
    items = [
        {"content": "The canary runs for fifteen minutes.", "tags": ["deploy"]},
        {"content": "Importance out of range.", "importance": 1.5},
        {"content": "An unknown field.", "colour": "blue"},
        {"content": "Rollbacks need a second approver.", "kind": "decision"},
        {"content": "token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"},
        {"content": "the canary runs for fifteen   minutes."},
        {
            "content": "A memory in a workspace that does not exist.",
            "workspace_id": "00000000-0000-4000-8000-0000000000ff",
        },
    ]
    response = await gateway.post("/v1/remember/batch", json={"items": items}, headers=auth)
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["index"] for r in results] == list(range(len(items)))
    assert [r["status"] for r in results] == [201, 422, 422, 201, 422, 200, 404]
    stored = [r["answer"]["id"] for r in results if r["status"] == 201]
    assert results[5]["answer"]["status"] == "deduplicated" and results[5]["answer"]["id"] == stored[0]
    assert results[3]["answer"]["item"]["kind"] == "decision"
    problems = {r["index"]: r["error"] for r in results if r["error"] is not None}
    assert {i: (p["code"], p["field"]) for i, p in problems.items()} == {
        1: ("validation_failed", "importance"),
        2: ("validation_failed", "colour"),
        4: ("secret_detected", "content"),
        6: ("not_found", "workspace_id"),
    }
    assert all(p["status"] == r["status"] for r in results if (p := r["error"]))
    assert all(r["answer"] is None for r in results if r["error"]) and all(
        r["error"] is None for r in results if r["answer"]
    )
    counts = await _counts(owner_pool, tenant.tenant_id)
    assert counts["memory_items"] == 2 and counts["item_events"] == 2
    created = await outbox_envelopes(owner_pool, tenant=tenant, types=["memory.created"])
    assert sorted(e["subject"] for e in created) == sorted(stored) and counts["outbox"] == 2
    rows = await owner_pool.fetch("SELECT id FROM memory_items WHERE tenant_id = $1::uuid", tenant.tenant_id)
    assert sorted(str(r["id"]) for r in rows) == sorted(stored)


@pytest.mark.parametrize("size", [0, 101])
async def test_a_batch_holds_one_to_a_hundred_memories(
    gateway: httpx.AsyncClient, make_key: KeyMaker, tenant: CallerContext, owner_pool: asyncpg.Pool, size: int
) -> None:
    auth = {"authorization": await make_key(tenant)}
    items = [{"content": f"Batch memory number {i}."} for i in range(size)]
    response = await gateway.post("/v1/remember/batch", json={"items": items}, headers=auth)
    assert response.status_code == 422 and response.json()["field"] == "items", response.text
    assert (await _counts(owner_pool, tenant.tenant_id))["memory_items"] == 0
    # positive control: a hundred go through
    full = await gateway.post("/v1/remember/batch", json={"items": items[:100] or [{"content": "one"}]}, headers=auth)
    assert full.status_code == 200 and all(r["status"] == 201 for r in full.json()["results"])
