"""Security review findings 7 (rate limits of the review, verify, invalidate and bulk routes) and 9 (the
low-severity ones) through the gateway: the platform ceiling on a tenant's limits, the explicit platform
administrator, a hostile x-request-id, the dummy hash for unknown key ids, pinning by agents, and routes that
authenticate through the app's own dependency."""

from __future__ import annotations

import secrets
import uuid
from typing import Any

import asyncpg
import httpx
import pytest

from engram.config import DEFAULT_ADMIN_ID, DEFAULT_TENANT_ID, Settings
from engram.db import identity
from engram.domain.models import CallerContext
from services.gateway import auth as gateway_auth
from services.gateway.app import create_app
from services.gateway.auth import caller
from services.gateway.mcp_http import PATH as MCP_PATH
from services.gateway.mcp_http import McpEndpoint
from tests.support.keys import KeyMaker
from tests.support.tenants import create_tenant

# the probes, the metrics and the API documentation with its static assets (the scripts and styles of /docs)
PUBLIC_PATHS = {
    "/health",
    "/ready",
    "/metrics",
    "/openapi.json",
    "/docs",
    "/docs/oauth2-redirect",
    "/docs/assets",
    "/redoc",
}


async def _remember(gateway: httpx.AsyncClient, auth: dict[str, str], content: str) -> str:
    created = await gateway.post("/v1/remember", json={"content": content}, headers=auth)
    assert created.status_code == 201, created.text
    return str(created.json()["item"]["id"])


async def test_review_verify_invalidate_and_bulk_are_rate_limited(
    gateway: httpx.AsyncClient, owner_pool: asyncpg.Pool, make_key: KeyMaker
) -> None:
    tenant = await create_tenant(owner_pool)
    admin = {"authorization": await make_key(tenant, ["admin"])}
    limits = {"review": 2, "bulk": 1}
    changed = await gateway.patch("/v1/admin/tenant-config", json={"rate_limits": limits}, headers=admin)
    assert changed.status_code == 200 and changed.json()["config"]["rate_limits"] == limits
    reviewer = {"authorization": await make_key(tenant, ["read", "write", "review"])}
    ids = [await _remember(gateway, reviewer, f"Reviewed fact number {n}.") for n in range(3)]
    statuses = [
        (await gateway.post(f"/v1/items/{ids[0]}/verify", json={}, headers=reviewer)).status_code,
        (await gateway.post(f"/v1/items/{ids[1]}/review", json={"action": "archive"}, headers=reviewer)).status_code,
        (await gateway.post(f"/v1/items/{ids[2]}/invalidate", json={"reason": "wrong"}, headers=reviewer)).status_code,
    ]
    assert statuses == [200, 200, 429]  # one bucket for the three
    bulk = {"action": "archive", "filter": {"tags": ["none"]}}
    first = await gateway.post("/v1/items/bulk", json=bulk, headers=reviewer)
    second = await gateway.post("/v1/items/bulk", json=bulk, headers=reviewer)
    assert (first.status_code, second.status_code) == (200, 429)
    assert int(second.headers["retry-after"]) >= 1


async def test_a_tenant_cannot_raise_its_limits_over_the_platform_ceiling(
    gateway: httpx.AsyncClient, owner_pool: asyncpg.Pool, make_key: KeyMaker, servers: Settings
) -> None:
    admin = {"authorization": await make_key(await create_tenant(owner_pool), ["admin"])}
    ceiling = servers.rate_limit_ceiling_per_minute
    allowed = await gateway.patch("/v1/admin/tenant-config", json={"rate_limits": {"recall": ceiling}}, headers=admin)
    assert allowed.status_code == 200  # positive control: up to the ceiling
    over = await gateway.patch("/v1/admin/tenant-config", json={"rate_limits": {"recall": ceiling + 1}}, headers=admin)
    assert over.status_code == 422 and over.json()["field"] == "rate_limits" and str(ceiling) in over.json()["detail"]
    config = await gateway.get("/v1/admin/tenant-config", headers=admin)
    assert config.json()["config"]["rate_limits"] == {"recall": ceiling}


async def test_an_admin_typed_principal_is_not_a_platform_administrator(
    gateway: httpx.AsyncClient, owner_pool: asyncpg.Pool, make_key: KeyMaker, app_pool: asyncpg.Pool
) -> None:
    platform = {"authorization": await make_key(CallerContext(DEFAULT_TENANT_ID, DEFAULT_ADMIN_ID, "admin"), ["admin"])}
    other = await create_tenant(owner_pool)
    made = await gateway.post(
        "/v1/admin/principals", json={"tenant_id": other.tenant_id, "name": "ops", "type": "admin"}, headers=platform
    )
    assert made.status_code == 201  # the flagged development admin still is one (positive control)
    issued = await identity.create_key(app_pool, other.tenant_id, made.json()["id"], ["admin"], "ops")
    typed_admin = {"authorization": f"Bearer {issued.key}"}
    assert (await gateway.get("/v1/admin/tenant-config", headers=typed_admin)).status_code == 200  # its own tenant
    tenant = await gateway.post("/v1/admin/tenants", json={"name": f"t-{uuid.uuid4().hex[:8]}"}, headers=typed_admin)
    assert tenant.status_code == 403 and tenant.json()["code"] == "platform_admin_only"
    elsewhere = await gateway.get(f"/v1/admin/tenant-config?tenant_id={DEFAULT_TENANT_ID}", headers=typed_admin)
    assert elsewhere.status_code == 404


async def test_auth_disabled_is_the_development_tenants_administrator_only(
    servers: Settings, owner_pool: asyncpg.Pool
) -> None:
    other = await create_tenant(owner_pool)
    app = create_app(servers.model_copy(update={"auth_enabled": False}))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gw") as client:
            assert (await client.get("/v1/admin/tenant-config")).status_code == 200  # its own tenant
            named = await client.get(f"/v1/admin/tenant-config?tenant_id={other.tenant_id}")
            assert named.status_code == 404
            created = await client.post("/v1/admin/tenants", json={"name": f"t-{uuid.uuid4().hex[:8]}"})
            assert created.status_code == 403


@pytest.mark.parametrize("request_id", ["caf\u00e9-\u00e9t\u00e9", "a" * 129, "two words", "line\tbreak"])
async def test_a_hostile_request_id_is_replaced_not_a_500(
    gateway: httpx.AsyncClient, tenant: CallerContext, make_key: KeyMaker, request_id: str
) -> None:
    auth = {"authorization": await make_key(tenant)}
    headers = {**auth, "x-request-id": request_id.encode("latin-1")}
    written = await gateway.post("/v1/remember", json={"content": f"Tagged {uuid.uuid4()}."}, headers=headers)  # type: ignore[arg-type]
    assert written.status_code == 201, written.text
    kept = await gateway.post("/v1/recall", json={"mode": "startup"}, headers={**auth, "x-request-id": "req-Fine_1.2"})
    assert kept.status_code == 200  # positive control: a well-formed id goes through


async def test_an_unknown_key_id_is_hashed_like_a_known_one(
    gateway: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[bytes] = []
    real = gateway_auth.secret_matches

    def counting(salt: bytes, stored_hash: bytes, secret: str) -> bool:
        compared.append(stored_hash)
        return real(salt, stored_hash, secret)

    monkeypatch.setattr(gateway_auth, "secret_matches", counting)
    bogus = f"Bearer eng_{secrets.token_hex(8)}_{secrets.token_urlsafe(32)}"
    for _ in range(2):  # looked up, then remembered as unknown: the hash is compared both times
        assert (await gateway.get("/v1/trash", headers={"authorization": bogus})).status_code == 401
    assert len(compared) == 2


async def test_agents_pin_only_with_the_review_scope(
    gateway: httpx.AsyncClient, owner_pool: asyncpg.Pool, make_key: KeyMaker
) -> None:
    agent = await create_tenant(owner_pool, principal_type="agent")
    writer = {"authorization": await make_key(agent, ["read", "write"])}
    assert (await gateway.post("/v1/remember", json={"content": "Plain note."}, headers=writer)).status_code == 201
    refused = await gateway.post("/v1/remember", json={"content": "Pin me.", "pinned": True}, headers=writer)
    assert refused.status_code == 403
    assert (refused.json()["code"], refused.json()["field"]) == ("pin_not_allowed", "pinned")
    reviewer = {"authorization": await make_key(agent, ["read", "write", "review"])}
    pinned = await gateway.post("/v1/remember", json={"content": "Pin me.", "pinned": True}, headers=reviewer)
    assert pinned.status_code == 201 and pinned.json()["item"]["pinned"] is True
    async with owner_pool.acquire() as conn:
        count = await conn.fetchval("SELECT count(*) FROM memory_items WHERE tenant_id = $1", agent.tenant_id)
    assert count == 2


async def test_an_agent_cannot_pin_through_patch_without_the_review_scope(
    gateway: httpx.AsyncClient, owner_pool: asyncpg.Pool, make_key: KeyMaker
) -> None:
    agent = await create_tenant(owner_pool, principal_type="agent")
    writer = {"authorization": await make_key(agent, ["read", "write"])}
    item = (await gateway.post("/v1/remember", json={"content": "Patch me later."}, headers=writer)).json()
    refused = await gateway.patch(f"/v1/items/{item['id']}", json={"pinned": True}, headers=writer)
    assert refused.status_code == 403
    assert (refused.json()["code"], refused.json()["field"]) == ("pin_not_allowed", "pinned")
    assert (await gateway.get(f"/v1/items/{item['id']}", headers=writer)).json()["pinned"] is False
    reviewer = {"authorization": await make_key(agent, ["read", "write", "review"])}
    pinned = await gateway.patch(f"/v1/items/{item['id']}", json={"pinned": True}, headers=reviewer)
    assert pinned.status_code == 200 and pinned.json()["pinned"] is True


def _effective_routes(routes: list[Any]) -> list[Any]:
    """Every route as the app serves it: an APIRoute of the app itself, or a route of an included router with
    what its routers add (this FastAPI keeps included routers as they are and combines them lazily)."""
    found: list[Any] = []
    for route in routes:
        if hasattr(route, "effective_candidates"):
            found.extend(_effective_routes(route.effective_candidates()))
        else:
            found.append(route)
    return found


def test_every_route_goes_through_the_apps_caller(servers: Settings) -> None:
    """Security review finding 9: every route gets ``caller`` from the app's dependencies (which FastAPI puts
    before the route's own), not from a parameter it could leave out; only the public pages declare
    ``public``, the one policy under which ``caller`` reads no key."""
    app = create_app(servers)
    checked = 0
    for route in _effective_routes(app.routes):
        path = getattr(route, "path", "")
        if path == MCP_PATH:  # a plain ASGI route that authenticates each request itself (test_mcp_edge.py)
            assert isinstance(route.endpoint, McpEndpoint)
            continue
        if not hasattr(route, "dependencies"):  # /openapi.json and the docs' assets: Starlette's, no handler of ours
            assert path in PUBLIC_PATHS, f"{path} is not an API route"
            continue
        router_level = [d.dependency for d in route.dependencies]
        assert router_level[:1] == [caller], f"{sorted(route.methods)} {path} does not depend on caller first"
        public = (route.openapi_extra or {}).get(gateway_auth.POLICY) == gateway_auth.PUBLIC
        assert public == (path in PUBLIC_PATHS), f"{path}: public is {public}"
        checked += 1
    assert checked > 30  # positive control: the walk found the v1 and admin routes
