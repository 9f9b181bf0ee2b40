"""Authentication, scopes and the admin API through the gateway (real servers, real database)."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
import httpx
import pytest
from fastapi.routing import APIRoute

from engram.config import DEFAULT_ADMIN_ID, DEFAULT_TENANT_ID, Settings
from engram.db import identity
from engram.domain.models import CallerContext
from services.gateway.app import create_app
from services.gateway.auth import POLICY
from tests.support.keys import KeyMaker
from tests.support.tenants import create_tenant

# (method, path, body, scope it needs) for every v1 route; {id} is filled with a real item id
ROUTES = [
    ("POST", "/v1/remember", {"content": "scope matrix probe"}, "write"),
    ("POST", "/v1/recall", {"query": "probe", "mode": "keyword"}, "read"),
    ("POST", "/v1/search", {"query": "probe", "mode": "keyword"}, "read"),
    ("GET", "/v1/items/{id}", None, "read"),
    ("GET", "/v1/items/{id}/status", None, "read"),
    ("GET", "/v1/items", None, "read"),
    ("GET", "/v1/stats", None, "read"),
    ("GET", "/v1/admin/api-keys", None, "admin"),
    ("POST", "/v1/admin/principals", {"name": "matrix agent", "type": "agent"}, "admin"),
    ("POST", "/v1/admin/workspaces", {"name": "matrix-{id}"}, "admin"),
    ("GET", "/v1/admin/tenant-config", None, "admin"),
    ("PATCH", "/v1/admin/tenant-config", {"rate_limits": {"recall": 5000}}, "admin"),
    ("POST", "/v1/admin/tenants", {"name": "matrix-tenant-{id}"}, "admin"),
    ("GET", "/v1/items/{id}/events", None, "read"),
    ("POST", "/v1/items/{id}/verify", {}, "review"),
    ("POST", "/v1/items/{id}/review", {"action": "archive"}, "write|review"),
]


async def _item_id(gateway: httpx.AsyncClient, auth: str) -> str:
    response = await gateway.post("/v1/remember", json={"content": "an item to read"}, headers={"authorization": auth})
    return str(response.json()["id"])


async def test_bad_keys_all_get_the_same_401(
    gateway: httpx.AsyncClient, tenant: CallerContext, make_key: KeyMaker, app_pool: asyncpg.Pool
) -> None:
    good = await make_key(tenant)
    ok = await gateway.post("/v1/recall", json={"query": "x", "mode": "keyword"}, headers={"authorization": good})
    assert ok.status_code == 200  # positive control
    revoked = await make_key(tenant)
    assert await identity.revoke_key(app_pool, tenant.tenant_id, revoked.split("_")[1])
    key_id = good.split("_")[1]
    bad_headers: list[dict[str, str]] = [
        {},
        {"authorization": "Bearer"},
        {"authorization": "Basic abc"},
        {"authorization": "Bearer nonsense"},
        {"authorization": good.replace("Bearer ", "Token ")},
        {"authorization": f"Bearer eng_{key_id}_{'A' * 43}"},  # right id, wrong secret
        {"authorization": f"Bearer eng_{'0' * 16}_{'A' * 43}"},  # unknown id
        {"authorization": revoked},
    ]
    bodies = []
    for headers in bad_headers:
        response = await gateway.post("/v1/recall", json={"query": "x", "mode": "keyword"}, headers=headers)
        assert response.status_code == 401, headers
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert response.headers["content-type"] == "application/problem+json"
        bodies.append(response.json())
    assert all(body == bodies[0] for body in bodies) and bodies[0]["code"] == "unauthenticated"


async def test_public_routes_need_no_key(gateway: httpx.AsyncClient) -> None:
    assert (await gateway.get("/health")).status_code == 200
    assert (await gateway.get("/metrics")).status_code == 200
    assert (await gateway.get("/ready")).status_code in (200, 503)  # a report, never a 401
    assert (await gateway.get("/openapi.json")).status_code == 200


@pytest.mark.parametrize("granted", [["read"], ["write"], ["review"], ["export"], ["admin"], ["read", "write"]])
async def test_scope_matrix(
    granted: list[str], gateway: httpx.AsyncClient, tenant: CallerContext, make_key: KeyMaker
) -> None:
    auth = await make_key(tenant, granted)
    item_id = await _item_id(gateway, await make_key(tenant, ["write"]))
    for method, path, body, needed in ROUTES:
        if body is not None:
            body = {k: v.replace("{id}", item_id) if isinstance(v, str) else v for k, v in body.items()}
        response = await gateway.request(
            method, path.replace("{id}", item_id), json=body, headers={"authorization": auth}
        )
        allowed = any(scope in granted for scope in needed.split("|")) or "admin" in granted
        if path == "/v1/admin/tenants" and allowed:
            # a tenant admin holds the scope but is not the platform administrator
            assert response.status_code == 403 and response.json()["code"] == "platform_admin_only"
        elif allowed:
            assert response.status_code < 400, (granted, path, response.text)
        else:
            assert response.status_code == 403, (granted, path)
            assert response.json()["detail"] == f"Requires scope: {needed.replace('|', ' or ')}"
            assert response.json()["code"] == "insufficient_scope"


async def test_a_refused_write_writes_nothing(
    gateway: httpx.AsyncClient, tenant: CallerContext, make_key: KeyMaker, owner_pool: asyncpg.Pool
) -> None:
    async with owner_pool.acquire() as conn:
        before = await conn.fetchval("SELECT count(*) FROM memory_items WHERE tenant_id = $1::uuid", tenant.tenant_id)
    refused = await gateway.post(
        "/v1/remember",
        json={"content": "read-only callers cannot write this"},
        headers={"authorization": await make_key(tenant, ["read"])},
    )
    assert refused.status_code == 403
    async with owner_pool.acquire() as conn:
        after = await conn.fetchval("SELECT count(*) FROM memory_items WHERE tenant_id = $1::uuid", tenant.tenant_id)
    assert after == before


def _api_routes(routes: list[Any]) -> list[APIRoute]:
    """Every APIRoute, including those of included routers."""
    found: list[APIRoute] = []
    for route in routes:
        if isinstance(route, APIRoute):
            found.append(route)
        elif hasattr(route, "original_router"):
            found.extend(_api_routes(route.original_router.routes))
    return found


def test_every_route_declares_a_scope_policy(servers: Settings) -> None:
    app = create_app(servers)
    routes = _api_routes(app.routes)
    assert len(routes) >= 14
    # the documentation pages (fastapi-offline's) call no dependency and show only what /openapi.json holds
    docs_pages = {"/docs", "/docs/oauth2-redirect", "/redoc"}
    assert docs_pages <= {r.path for r in routes}
    missing = [r.path for r in routes if POLICY not in (r.openapi_extra or {}) and r.path not in docs_pages]
    assert missing == []
    spec = app.openapi()
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            assert POLICY in operation, f"{method.upper()} {path} has no {POLICY} in OpenAPI"


async def test_admin_api_builds_an_isolated_tenant(
    gateway: httpx.AsyncClient, make_key: KeyMaker, owner_pool: asyncpg.Pool
) -> None:
    platform = await make_key(CallerContext(DEFAULT_TENANT_ID, DEFAULT_ADMIN_ID, "admin"), ["admin"])
    admin = {"authorization": platform}
    created_tenant = await gateway.post(
        "/v1/admin/tenants", json={"name": f"acme-{uuid.uuid4().hex[:8]}"}, headers=admin
    )
    assert created_tenant.status_code == 201
    tenant_id = created_tenant.json()["id"]
    workspace = await gateway.post(
        "/v1/admin/workspaces", json={"tenant_id": tenant_id, "name": "research"}, headers=admin
    )
    assert workspace.status_code == 201
    agent = await gateway.post(
        "/v1/admin/principals", json={"tenant_id": tenant_id, "name": "scout", "type": "agent"}, headers=admin
    )
    agent_id = agent.json()["id"]
    member = await gateway.post(
        f"/v1/admin/workspaces/{workspace.json()['id']}/members",
        json={"tenant_id": tenant_id, "principal_id": agent_id, "role": "member"},
        headers=admin,
    )
    assert member.status_code == 200 and member.json()["role"] == "member"
    unknown = await gateway.post(
        "/v1/admin/api-keys",
        json={"tenant_id": tenant_id, "principal_id": agent_id, "scopes": ["read", "superpower"]},
        headers=admin,
    )
    assert unknown.status_code == 422 and unknown.json()["field"] == "scopes"
    issued = await gateway.post(
        "/v1/admin/api-keys",
        json={"tenant_id": tenant_id, "principal_id": agent_id, "label": "scout key"},
        headers=admin,
    )
    assert issued.status_code == 201 and issued.json()["scopes"] == ["read", "write"]
    key = issued.json()["key"]
    assert key.startswith(f"eng_{issued.json()['id']}_")
    async with owner_pool.acquire() as conn:  # only a salted hash is stored
        stored = await conn.fetchrow("SELECT * FROM api_keys WHERE id = $1", issued.json()["id"])
    assert key.split("_", 2)[2].encode() not in bytes(stored["secret_hash"]) and len(stored["salt"]) == 16

    created = await gateway.post(
        "/v1/remember", json={"content": "The scout found the north pass."}, headers={"authorization": f"Bearer {key}"}
    )
    assert created.status_code == 201 and created.json()["item"]["tenant_id"] == tenant_id
    assert created.json()["authority"] == 20  # an untrusted agent
    listed = await gateway.get("/v1/admin/api-keys", params={"tenant_id": tenant_id}, headers=admin)
    assert [k["label"] for k in listed.json()["items"]] == ["scout key"] and "key" not in listed.json()["items"][0]
    assert (
        await gateway.delete(
            f"/v1/admin/api-keys/{issued.json()['id']}", params={"tenant_id": tenant_id}, headers=admin
        )
    ).status_code == 204
    again = await gateway.post(
        "/v1/recall", json={"query": "pass", "mode": "keyword"}, headers={"authorization": f"Bearer {key}"}
    )
    assert again.status_code == 401


async def test_tenant_admins_manage_only_their_own_tenant(
    gateway: httpx.AsyncClient, owner_pool: asyncpg.Pool, make_key: KeyMaker
) -> None:
    mine, other = await create_tenant(owner_pool), await create_tenant(owner_pool)
    auth = {"authorization": await make_key(mine, ["admin"])}
    own = await gateway.post("/v1/admin/principals", json={"name": "helper", "type": "agent"}, headers=auth)
    assert own.status_code == 201  # positive control: its own tenant
    for path, body in (
        ("/v1/admin/principals", {"tenant_id": other.tenant_id, "name": "x", "type": "agent"}),
        ("/v1/admin/workspaces", {"tenant_id": other.tenant_id, "name": "x"}),
        ("/v1/admin/api-keys", {"tenant_id": other.tenant_id, "principal_id": other.principal_id}),
    ):
        response = await gateway.post(path, json=body, headers=auth)
        assert response.status_code == 404, path
    refused = await gateway.post("/v1/admin/tenants", json={"name": "mine-too"}, headers=auth)
    assert refused.status_code == 403 and refused.json()["code"] == "platform_admin_only"
    elevated = await gateway.post("/v1/admin/principals", json={"name": "root", "type": "admin"}, headers=auth)
    assert elevated.status_code == 403


async def test_auth_disabled_runs_as_the_development_admin(servers: Settings) -> None:
    app = create_app(servers.model_copy(update={"auth_enabled": False}))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gw") as client:
            created = await client.post("/v1/remember", json={"content": "written with auth disabled"})
            assert created.status_code == 201
            assert created.json()["item"]["principal_id"] == DEFAULT_ADMIN_ID
            assert (await client.get("/v1/admin/api-keys")).status_code == 200


async def test_rate_limits_per_principal_from_tenant_config(
    gateway: httpx.AsyncClient, owner_pool: asyncpg.Pool, make_key: KeyMaker, app_pool: asyncpg.Pool
) -> None:
    tenant = await create_tenant(owner_pool)
    admin = {"authorization": await make_key(tenant, ["admin"])}
    bad = await gateway.patch("/v1/admin/tenant-config", json={"rate_limits": {"teleport": 1}}, headers=admin)
    assert bad.status_code == 422 and bad.json()["field"] == "rate_limits"
    changed = await gateway.patch("/v1/admin/tenant-config", json={"rate_limits": {"remember": 2}}, headers=admin)
    assert changed.status_code == 200 and changed.json()["config"]["rate_limits"] == {"remember": 2}
    writer = {"authorization": await make_key(tenant)}
    statuses = [
        (await gateway.post("/v1/remember", json={"content": f"note {n}"}, headers=writer)).status_code
        for n in range(3)
    ]
    assert statuses == [201, 201, 429]
    limited = await gateway.post("/v1/remember", json={"content": "note 4"}, headers=writer)
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    assert limited.json()["code"] == "rate_limited"
    # recall has its own budget, and another principal of the tenant its own bucket
    assert (
        await gateway.post("/v1/recall", json={"query": "note", "mode": "keyword"}, headers=writer)
    ).status_code == 200
    other_principal = await identity.create_principal(app_pool, tenant.tenant_id, "other", "user")
    other = {"authorization": await make_key(CallerContext(tenant.tenant_id, other_principal, "user"))}
    assert (await gateway.post("/v1/remember", json={"content": "other note"}, headers=other)).status_code == 201


async def test_tenant_admins_cannot_become_platform_administrators(
    gateway: httpx.AsyncClient, make_key: KeyMaker, app_pool: asyncpg.Pool
) -> None:
    """A tenant admin of the development tenant must not mint keys for its admin principal, or publish it."""
    user = await identity.create_principal(app_pool, DEFAULT_TENANT_ID, f"tenant-admin-{uuid.uuid4().hex[:6]}", "user")
    auth = {"authorization": await make_key(CallerContext(DEFAULT_TENANT_ID, user, "user"), ["admin"])}
    agent = await gateway.post("/v1/admin/principals", json={"name": "a helper", "type": "agent"}, headers=auth)
    issued = await gateway.post(
        "/v1/admin/api-keys", json={"principal_id": agent.json()["id"], "scopes": ["admin"]}, headers=auth
    )
    assert issued.status_code == 201  # positive control: keys for ordinary principals
    escalate = await gateway.post(
        "/v1/admin/api-keys", json={"principal_id": DEFAULT_ADMIN_ID, "scopes": ["admin"]}, headers=auth
    )
    assert escalate.status_code == 403 and escalate.json()["code"] == "platform_admin_only"
    publish = await gateway.patch("/v1/admin/tenant-config", json={"public_enabled": True}, headers=auth)
    assert publish.status_code == 403 and publish.json()["code"] == "platform_admin_only"
    empty = await gateway.patch("/v1/admin/tenant-config", json={}, headers=auth)
    assert empty.status_code == 422


async def test_last_used_is_recorded_only_for_successful_use(
    gateway: httpx.AsyncClient, tenant: CallerContext, make_key: KeyMaker, owner_pool: asyncpg.Pool
) -> None:
    auth = await make_key(tenant)
    key_id = auth.split("_")[1]
    wrong = await gateway.post(
        "/v1/recall",
        json={"query": "x", "mode": "keyword"},
        headers={"authorization": f"Bearer eng_{key_id}_{'B' * 43}"},
    )
    assert wrong.status_code == 401
    async with owner_pool.acquire() as conn:
        assert await conn.fetchval("SELECT last_used_at FROM api_keys WHERE id = $1", key_id) is None
    ok = await gateway.post("/v1/recall", json={"query": "x", "mode": "keyword"}, headers={"authorization": auth})
    assert ok.status_code == 200
    async with owner_pool.acquire() as conn:
        assert await conn.fetchval("SELECT last_used_at FROM api_keys WHERE id = $1", key_id) is not None
