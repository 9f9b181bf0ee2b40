"""Idempotency-Key on remember, remember/batch and observe through REST (real servers and database): a retry
replays the first answer and writes nothing, another body is refused, concurrent requests write once, and the
sweep prunes old keys."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import asyncpg
import httpx
import pytest

from engram.config import Settings
from engram.domain.models import CallerContext
from services.ingest.trash import sweep
from tests.support.keys import KeyMaker

ROUTES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("/v1/remember", {"content": "Payments settle at 17:00 UTC."}, {"content": "Payments settle at 18:00 UTC."}),
    (
        "/v1/remember/batch",
        {"items": [{"content": "Invoices go out on the 1st."}, {"content": "x", "importance": 7}]},
        {"items": [{"content": "Invoices go out on the 2nd."}]},
    ),
    ("/v1/observe", {"content": "The user opened the billing page."}, {"content": "The user closed the billing page."}),
]


async def _counts(owner_pool: asyncpg.Pool, tenant_id: str) -> dict[str, int]:
    async with owner_pool.acquire() as conn:
        return {
            t: await conn.fetchval(f"SELECT count(*) FROM {t} WHERE tenant_id = $1::uuid", tenant_id)
            for t in ("memory_items", "item_events", "outbox", "item_stages", "idempotency_keys")
        }


@pytest.mark.parametrize(("path", "body", "other"), ROUTES)
async def test_a_retry_replays_the_answer_and_writes_nothing(
    gateway: httpx.AsyncClient,
    make_key: KeyMaker,
    tenant: CallerContext,
    owner_pool: asyncpg.Pool,
    path: str,
    body: dict[str, Any],
    other: dict[str, Any],
) -> None:
    auth = {"authorization": await make_key(tenant)}
    headers = {**auth, "Idempotency-Key": "retry-7f3a"}
    first = await gateway.post(path, json=body, headers=headers)
    assert first.status_code in (200, 201), first.text
    assert "idempotent-replayed" not in first.headers
    counts = await _counts(owner_pool, tenant.tenant_id)
    assert counts["memory_items"] == 1 and counts["idempotency_keys"] == 1
    # the same body, keys in another order: the stored answer, marked, and nothing written
    replay = await gateway.post(path, json=dict(reversed(body.items())), headers=headers)
    assert replay.status_code == first.status_code and replay.json() == first.json()
    assert replay.headers["idempotent-replayed"] == "true"
    assert await _counts(owner_pool, tenant.tenant_id) == counts
    # another body under the same key: refused, nothing written
    reused = await gateway.post(path, json=other, headers=headers)
    assert reused.status_code == 409 and reused.json()["code"] == "idempotency_key_reused", reused.text
    assert reused.json()["field"] == "Idempotency-Key"
    assert await _counts(owner_pool, tenant.tenant_id) == counts
    # positive control: without the key the same request is a new request (deduplicated, not replayed)
    plain = await gateway.post(path, json=body, headers=auth)
    assert "idempotent-replayed" not in plain.headers
    # and the key is the caller's own: another principal's same key writes
    stranger = CallerContext(tenant.tenant_id, await _principal(owner_pool, tenant), "user")
    theirs = await gateway.post(
        path, json=other, headers={"authorization": await make_key(stranger), "Idempotency-Key": "retry-7f3a"}
    )
    assert theirs.status_code in (200, 201) and "idempotent-replayed" not in theirs.headers


async def _principal(owner_pool: asyncpg.Pool, tenant: CallerContext) -> str:
    principal = uuid.uuid4()
    async with owner_pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO principals (tenant_id, id, name, type) VALUES ($1::uuid, $2, 'other', 'user')",
            tenant.tenant_id,
            principal,
        )
        await conn.execute(
            "INSERT INTO workspace_members (tenant_id, workspace_id, principal_id, role) "
            "SELECT $1::uuid, id, $2, 'member' FROM workspaces WHERE tenant_id = $1::uuid",
            tenant.tenant_id,
            principal,
        )
    return str(principal)


@pytest.mark.parametrize("key", ["", "k" * 201, "naïve-key", "tab\tkey"])
async def test_a_malformed_key_is_refused(
    gateway: httpx.AsyncClient, make_key: KeyMaker, tenant: CallerContext, owner_pool: asyncpg.Pool, key: str
) -> None:
    auth = {"authorization": await make_key(tenant)}
    response = await gateway.post(
        "/v1/remember",
        json={"content": "A memory."},
        headers=httpx.Headers({**auth, "Idempotency-Key": key}, encoding="utf-8"),
    )
    assert response.status_code == 422 and response.json()["field"] == "Idempotency-Key", response.text
    assert (await _counts(owner_pool, tenant.tenant_id))["memory_items"] == 0
    ok = await gateway.post(
        "/v1/remember", json={"content": "A memory."}, headers={**auth, "Idempotency-Key": "k" * 200}
    )
    assert ok.status_code == 201  # positive control: 200 printable characters


async def test_concurrent_requests_with_one_key_write_once(
    gateway: httpx.AsyncClient, make_key: KeyMaker, tenant: CallerContext, owner_pool: asyncpg.Pool
) -> None:
    headers = {"authorization": await make_key(tenant), "Idempotency-Key": "concurrent-1"}
    items = [{"content": f"Concurrent batch memory {i}."} for i in range(20)]
    answers = await asyncio.gather(
        *(gateway.post("/v1/remember/batch", json={"items": items}, headers=headers) for _ in range(4))
    )
    assert [a.status_code for a in answers] == [200] * 4
    assert all(a.json() == answers[0].json() for a in answers)
    assert all(r["status"] == 201 for r in answers[0].json()["results"])  # not one deduplicated
    assert sorted(a.headers.get("idempotent-replayed", "") for a in answers) == ["", "true", "true", "true"]
    counts = await _counts(owner_pool, tenant.tenant_id)
    assert counts["memory_items"] == 20 and counts["outbox"] == 20 and counts["idempotency_keys"] == 1


async def test_the_sweep_prunes_old_keys_and_an_old_key_writes_again(
    gateway: httpx.AsyncClient,
    make_key: KeyMaker,
    tenant: CallerContext,
    owner_pool: asyncpg.Pool,
    app_pool: asyncpg.Pool,
    settings: Settings,
) -> None:
    auth = {"authorization": await make_key(tenant)}
    for key in ("old", "fresh"):
        response = await gateway.post(
            "/v1/observe", json={"content": f"Observed with the {key} key."}, headers={**auth, "Idempotency-Key": key}
        )
        assert response.status_code == 201
    await owner_pool.execute(
        "UPDATE idempotency_keys SET created_at = now() - make_interval(hours => $2) "
        "WHERE tenant_id = $1::uuid AND key = 'old'",
        tenant.tenant_id,
        settings.idempotency_ttl_hours + 1,
    )
    # before the sweep, an expired key no longer replays: it is taken afresh
    again = await gateway.post(
        "/v1/observe", json={"content": "Observed anew."}, headers={**auth, "Idempotency-Key": "old"}
    )
    assert again.status_code == 201 and "idempotent-replayed" not in again.headers
    await owner_pool.execute(
        "UPDATE idempotency_keys SET created_at = now() - make_interval(hours => $2) "
        "WHERE tenant_id = $1::uuid AND key = 'old'",
        tenant.tenant_id,
        settings.idempotency_ttl_hours + 1,
    )
    report = await sweep(app_pool, settings)
    assert report.idempotency_keys >= 1
    keys = await owner_pool.fetch("SELECT key FROM idempotency_keys WHERE tenant_id = $1::uuid", tenant.tenant_id)
    assert [r["key"] for r in keys] == ["fresh"]


async def test_the_key_table_is_bound_to_its_tenant(owner_pool: asyncpg.Pool) -> None:
    row = await owner_pool.fetchrow(
        "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = 'idempotency_keys'"
    )
    assert row is not None and row["relrowsecurity"] and row["relforcerowsecurity"]
