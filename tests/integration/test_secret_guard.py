"""The secret guard in ingest: credentials are refused (or redacted by tenant choice) before anything is stored."""

from __future__ import annotations

import asyncpg
import httpx

from engram.db import identity
from tests.support.tenants import create_tenant

# assembled at run time so the source holds no literal a secret scanner would flag
AWS_KEY = "AKIA" + "Z7Q3" * 4
PG_PASSWORD = "s3cr3t-" + "Pa55" * 3


async def _count(owner_pool: asyncpg.Pool, tenant_id: str) -> tuple[int, int, int]:
    async with owner_pool.acquire() as conn:
        row = await conn.fetchrow(
            "SELECT (SELECT count(*) FROM memory_items WHERE tenant_id = $1) AS items, "
            "(SELECT count(*) FROM outbox WHERE tenant_id = $1) AS events, "
            "(SELECT count(*) FROM item_events WHERE tenant_id = $1) AS audit",
            tenant_id,
        )
    return row["items"], row["events"], row["audit"]


async def test_secrets_are_refused_by_default_and_redacted_when_the_tenant_says_so(
    gateway: httpx.AsyncClient, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    tenant = await create_tenant(owner_pool)
    issued = await identity.create_key(app_pool, tenant.tenant_id, tenant.principal_id, ["read", "write", "admin"], "u")
    user = {"authorization": f"Bearer {issued.key}"}
    fine = await gateway.post(
        "/v1/remember", json={"content": "Our password policy requires 12 characters."}, headers=user
    )
    assert fine.status_code == 201
    before = await _count(owner_pool, tenant.tenant_id)
    for content, kind in (
        (f"The deploy user is AWS key {AWS_KEY}.", "aws_access_key"),
        (f"Connect with postgres://app:{PG_PASSWORD}@db.internal/prod", "connection_string_password"),
    ):
        refused = await gateway.post("/v1/remember", json={"content": content}, headers=user)
        assert refused.status_code == 422 and refused.json()["code"] == "secret_detected"
        assert refused.json()["field"] == "content" and kind in refused.json()["detail"]
        assert AWS_KEY not in refused.text and PG_PASSWORD not in refused.text  # the answer never echoes it
        superseding = await gateway.post(
            f"/v1/items/{fine.json()['id']}/supersede", json={"content": content}, headers=user
        )
        assert superseding.status_code == 422 and superseding.json()["code"] == "secret_detected"
    assert await _count(owner_pool, tenant.tenant_id) == before  # nothing written, no event

    patched = await gateway.patch("/v1/admin/tenant-config", json={"secret_policy": "redact"}, headers=user)
    assert patched.status_code == 200 and patched.json()["config"]["secret_policy"] == "redact"
    stored = await gateway.post(
        "/v1/remember", json={"content": f"Connect with postgres://app:{PG_PASSWORD}@db.internal/prod"}, headers=user
    )
    assert stored.status_code == 201, stored.text
    content = stored.json()["item"]["content"]
    assert content == "Connect with postgres://app:[REDACTED:connection_string_password]@db.internal/prod"
    async with owner_pool.acquire() as conn:
        leaks = await conn.fetchval(
            "SELECT (SELECT count(*) FROM memory_items WHERE content LIKE '%' || $1 || '%') + "
            "(SELECT count(*) FROM outbox WHERE envelope::text LIKE '%' || $1 || '%') + "
            "(SELECT count(*) FROM item_events WHERE new_value::text LIKE '%' || $1 || '%')",
            PG_PASSWORD,
        )
    assert leaks == 0
    trail = (await gateway.get(f"/v1/items/{stored.json()['id']}/events", headers=user)).json()["events"]
    assert trail[0]["new"]["redacted_secrets"] == ["connection_string_password"]
    bad = await gateway.patch("/v1/admin/tenant-config", json={"secret_policy": "ignore"}, headers=user)
    assert bad.status_code == 422 and bad.json()["field"] == "secret_policy"
