"""The Admin gRPC service as ingest serves it (real server, real database), called directly through the
gateway's Downstream: tenant scoping, conflicts, validation, the API-key life cycle, and the gateway's rate
limits when ingest cannot answer."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace

import asyncpg
import httpx
import pytest
import pytest_asyncio

from engram.config import DEFAULT_ADMIN_ID, DEFAULT_TENANT_ID, Settings
from engram.db import keys
from engram.db.pool import create_pool
from engram.domain.keys import secret_matches
from engram.domain.models import CallerContext
from engram.errors import Conflict, NotFound, PermissionDenied, Unavailable, ValidationFailed
from engram.rpc.server import start_server, stop_server
from engram.runtime.ports import free_port
from engram.v1 import admin_pb2
from services.gateway.app import create_app
from services.gateway.clients import Downstream
from services.gateway.limits import CONFIG_TTL_S, Limits
from services.ingest.app import SERVICE_NAMES, servicers
from tests.support.tenants import create_tenant

PLATFORM = CallerContext(DEFAULT_TENANT_ID, DEFAULT_ADMIN_ID, "admin", frozenset({"admin"}), platform_admin=True)


def tenant_admin(ctx: CallerContext) -> CallerContext:
    """The tenant's principal holding the admin scope (a tenant admin, not the platform administrator)."""
    return replace(ctx, scopes=frozenset({"admin"}))


@pytest_asyncio.fixture
async def admin(servers: Settings) -> AsyncIterator[Downstream]:
    ds = Downstream.connect(servers)
    yield ds
    await ds.close()


async def test_a_tenant_admin_manages_only_its_own_tenant(admin: Downstream, owner_pool: asyncpg.Pool) -> None:
    mine, other = await create_tenant(owner_pool), await create_tenant(owner_pool)
    ctx = tenant_admin(mine)
    own = await admin.call(admin.admin.CreateWorkspace, admin_pb2.CreateWorkspaceRequest(name="own"), ctx)
    assert uuid.UUID(own.id)  # positive control: its own tenant, named implicitly
    named = admin_pb2.CreateWorkspaceRequest(tenant_id=mine.tenant_id, name="named")
    assert (await admin.call(admin.admin.CreateWorkspace, named, ctx)).id

    for method, request in (
        (admin.admin.CreateWorkspace, admin_pb2.CreateWorkspaceRequest(tenant_id=other.tenant_id, name="x")),
        (admin.admin.ListApiKeys, admin_pb2.ListApiKeysRequest(tenant_id=other.tenant_id)),
        (admin.admin.GetTenantConfig, admin_pb2.GetTenantConfigRequest(tenant_id=other.tenant_id)),
        (admin.admin.ListTunnels, admin_pb2.ListTunnelsRequest(tenant_id=other.tenant_id)),
        (admin.admin.GetTenantConfig, admin_pb2.GetTenantConfigRequest(tenant_id=str(uuid.uuid4()))),
    ):
        with pytest.raises(NotFound) as refused:
            await admin.call(method, request, ctx)
        assert refused.value.field == "tenant_id"  # another tenant reads exactly like a missing one

    # the platform administrator may name the other tenant
    listed = await admin.call(
        admin.admin.ListApiKeys, admin_pb2.ListApiKeysRequest(tenant_id=other.tenant_id), PLATFORM
    )
    assert list(listed.items) == []
    with pytest.raises(PermissionDenied) as tenants:
        await admin.call(admin.admin.CreateTenant, admin_pb2.CreateTenantRequest(name="not mine to make"), ctx)
    assert tenants.value.code == "platform_admin_only"
    with pytest.raises(PermissionDenied) as elevated:
        request = admin_pb2.CreatePrincipalRequest(name="root", type="admin")
        await admin.call(admin.admin.CreatePrincipal, request, ctx)
    assert elevated.value.code == "platform_admin_only"


async def test_admin_calls_need_the_admin_scope_but_rate_limits_do_not(
    admin: Downstream, owner_pool: asyncpg.Pool
) -> None:
    writer = replace(await create_tenant(owner_pool), scopes=frozenset({"read", "write"}))
    with pytest.raises(PermissionDenied) as refused:
        await admin.call(admin.admin.GetTenantConfig, admin_pb2.GetTenantConfigRequest(), writer)
    assert refused.value.code == "insufficient_scope"
    limits = await admin.call(admin.admin.RateLimits, admin_pb2.RateLimitsRequest(), writer)
    assert dict(limits.limits.per_minute) == {}  # nothing set yet: the gateway's defaults apply


async def test_names_taken_are_conflicts(admin: Downstream, owner_pool: asyncpg.Pool) -> None:
    name = f"acme-{uuid.uuid4().hex[:8]}"
    created = await admin.call(admin.admin.CreateTenant, admin_pb2.CreateTenantRequest(name=name), PLATFORM)
    assert uuid.UUID(created.id)
    with pytest.raises(Conflict) as tenant_taken:
        await admin.call(admin.admin.CreateTenant, admin_pb2.CreateTenantRequest(name=name), PLATFORM)
    assert (tenant_taken.value.code, tenant_taken.value.field) == ("name_taken", "name")

    ctx = tenant_admin(await create_tenant(owner_pool))
    workspace = admin_pb2.CreateWorkspaceRequest(name="research")
    await admin.call(admin.admin.CreateWorkspace, workspace, ctx)
    with pytest.raises(Conflict) as workspace_taken:
        await admin.call(admin.admin.CreateWorkspace, workspace, ctx)
    assert (workspace_taken.value.code, workspace_taken.value.field) == ("name_taken", "name")

    kind = admin_pb2.CreateKindRequest(name="runbook", requires_review=True)
    made = await admin.call(admin.admin.CreateKind, kind, ctx)
    assert (made.name, made.requires_review, made.default_importance, made.built_in) == ("runbook", True, 0.5, False)
    with pytest.raises(Conflict):
        await admin.call(admin.admin.CreateKind, kind, ctx)


async def test_a_name_taken_answers_409_through_the_gateway(servers: Settings, owner_pool: asyncpg.Pool) -> None:
    ctx = await create_tenant(owner_pool)
    app = create_app(servers.model_copy(update={"auth_enabled": False}))  # the development tenant's admin
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gw") as client:
            body = {"name": f"twice-{ctx.tenant_id}"}
            assert (await client.post("/v1/admin/workspaces", json=body)).status_code == 201
            again = await client.post("/v1/admin/workspaces", json=body)
    assert again.status_code == 409
    assert (again.json()["code"], again.json()["field"]) == ("name_taken", "name")


async def test_invalid_settings_name_the_field_and_change_nothing(admin: Downstream, owner_pool: asyncpg.Pool) -> None:
    ctx = tenant_admin(await create_tenant(owner_pool))

    def limits(**per_minute: int) -> admin_pb2.PatchTenantConfigRequest:
        return admin_pb2.PatchTenantConfigRequest(rate_limits=admin_pb2.RouteLimits(per_minute=per_minute))

    applied = await admin.call(admin.admin.PatchTenantConfig, limits(recall=50), ctx)
    assert applied.version == 1  # populated first
    with pytest.raises(ValidationFailed) as unknown:
        await admin.call(admin.admin.PatchTenantConfig, limits(teleport=5), ctx)
    assert unknown.value.field == "rate_limits" and "teleport" in unknown.value.detail
    with pytest.raises(ValidationFailed) as zero:
        await admin.call(admin.admin.PatchTenantConfig, limits(recall=0), ctx)
    assert zero.value.field == "rate_limits" and "recall" in zero.value.detail
    with pytest.raises(ValidationFailed) as broken:
        request = admin_pb2.PatchTenantConfigRequest(promotion_json="{not json")
        await admin.call(admin.admin.PatchTenantConfig, request, ctx)
    assert broken.value.field == "promotion"
    with pytest.raises(ValidationFailed) as nothing:
        await admin.call(admin.admin.PatchTenantConfig, admin_pb2.PatchTenantConfigRequest(), ctx)
    assert nothing.value.field == "body"

    now = await admin.call(admin.admin.GetTenantConfig, admin_pb2.GetTenantConfigRequest(), ctx)
    assert now.version == 1 and '"recall": 50' in now.config_json
    read = await admin.call(admin.admin.RateLimits, admin_pb2.RateLimitsRequest(), ctx)
    assert dict(read.limits.per_minute) == {"recall": 50}


async def test_api_key_round_trip(admin: Downstream, owner_pool: asyncpg.Pool, app_pool: asyncpg.Pool) -> None:
    ctx = tenant_admin(await create_tenant(owner_pool))
    principal = await admin.call(
        admin.admin.CreatePrincipal, admin_pb2.CreatePrincipalRequest(name="scout", type="agent"), ctx
    )
    with pytest.raises(ValidationFailed) as bad_scope:
        request = admin_pb2.CreateApiKeyRequest(principal_id=principal.id, scopes=["read", "superpower"])
        await admin.call(admin.admin.CreateApiKey, request, ctx)
    assert bad_scope.value.field == "scopes"
    with pytest.raises(NotFound) as stranger:
        request = admin_pb2.CreateApiKeyRequest(principal_id=str(uuid.uuid4()))
        await admin.call(admin.admin.CreateApiKey, request, ctx)
    assert stranger.value.field == "principal_id"

    request = admin_pb2.CreateApiKeyRequest(principal_id=principal.id, scopes=["review", "read"], label="scout key")
    issued = await admin.call(admin.admin.CreateApiKey, request, ctx)
    assert list(issued.scopes) == ["read", "review"] and issued.tenant_id == ctx.tenant_id
    assert issued.key.startswith(f"eng_{issued.id}_")
    stored = await keys.find(app_pool, issued.id)
    assert stored is not None and stored.usable and stored.principal_id == principal.id
    assert secret_matches(stored.salt, stored.secret_hash, issued.key.split("_", 2)[2])

    listed = await admin.call(admin.admin.ListApiKeys, admin_pb2.ListApiKeysRequest(), ctx)
    assert [(k.id, k.label, list(k.scopes)) for k in listed.items] == [(issued.id, "scout key", ["read", "review"])]
    assert listed.items[0].HasField("created_at") and not listed.items[0].HasField("revoked_at")

    await admin.call(admin.admin.RevokeApiKey, admin_pb2.RevokeApiKeyRequest(id=issued.id), ctx)
    after = await admin.call(admin.admin.ListApiKeys, admin_pb2.ListApiKeysRequest(), ctx)
    assert after.items[0].HasField("revoked_at")
    revoked = await keys.find(app_pool, issued.id)
    assert revoked is not None and not revoked.usable
    with pytest.raises(NotFound):
        await admin.call(admin.admin.RevokeApiKey, admin_pb2.RevokeApiKeyRequest(id="0" * 16), ctx)


async def test_rate_limits_fall_back_when_ingest_is_down(
    settings: Settings, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    configured = settings.model_copy(
        update={"ingest_addr": f"127.0.0.1:{free_port()}", "internal_token": secrets.token_urlsafe(16)}
    )
    server, health = await start_server(
        configured.ingest_addr,
        "ingest",
        SERVICE_NAMES,
        servicers(app_pool, configured),
        internal_token=configured.internal_token,
    )
    ds = Downstream.connect(configured)
    now = [0.0]
    limits = Limits(ds, configured, clock=lambda: now[0])
    known, unseen = await create_tenant(owner_pool), await create_tenant(owner_pool)
    try:
        request = admin_pb2.PatchTenantConfigRequest(rate_limits=admin_pb2.RouteLimits(per_minute={"remember": 7}))
        await ds.call(ds.admin.PatchTenantConfig, request, tenant_admin(known))
        assert await limits.per_minute(known, "remember") == 7  # read through RateLimits
        assert await limits.per_minute(known, "recall") == configured.rate_limit_recall_per_minute
    finally:
        await stop_server(server, health, grace_s=1)
    try:
        with pytest.raises(Unavailable):  # ingest is really gone
            await ds.call(ds.admin.RateLimits, admin_pb2.RateLimitsRequest(), known)
        now[0] += CONFIG_TTL_S + 1  # the cached limits are stale: the next check asks again, and fails
        assert await limits.per_minute(known, "remember") == 7  # the last known limits stay in force
        assert await limits.per_minute(unseen, "remember") == configured.rate_limit_remember_per_minute
        await limits.check(unseen, "remember")  # counted, not refused for want of limits
        limits.forget(known.tenant_id)
        assert await limits.per_minute(known, "remember") == 7
    finally:
        await ds.close()


def test_openapi_documents_the_admin_responses(servers: Settings) -> None:
    spec = create_app(servers).openapi()
    schemas = spec["components"]["schemas"]
    expected = {
        ("/v1/admin/api-keys", "get", "200"): {"items"},
        ("/v1/admin/api-keys", "post", "201"): {"id", "key", "tenant_id", "principal_id", "scopes", "label"},
        ("/v1/admin/tenant-config", "patch", "200"): {"tenant_id", "config", "version", "public_enabled"},
        ("/v1/admin/kinds", "post", "201"): {"name", "built_in", "enabled", "default_importance"},
        ("/v1/admin/promote", "post", "200"): {"tenant_id", "dry_run", "decided", "counts"},
        ("/v1/admin/tunnels", "post", "201"): {"id", "from_wing", "to_room", "created_at"},
        ("/v1/admin/tunnels", "post", "200"): {"id", "from_wing", "to_room", "created_at"},
    }
    for (path, method, status), fields in expected.items():
        schema = spec["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]
        properties = schemas[schema["$ref"].rsplit("/", 1)[-1]]["properties"]
        assert fields <= set(properties), (path, method, status)


async def test_the_key_lookup_is_one_statement_that_leaves_nothing_on_the_pooled_connection(
    migrated: str, owner_pool: asyncpg.Pool
) -> None:
    ctx = await create_tenant(owner_pool)
    key_id = f"{uuid.uuid4().hex[:16]}"
    async with owner_pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO api_keys (tenant_id, id, principal_id, salt, secret_hash, scopes) "
            "VALUES ($1, $2, $3, '\\x00', '\\x00', '{read}')",
            uuid.UUID(ctx.tenant_id),
            key_id,
            uuid.UUID(ctx.principal_id),
        )
    one = await create_pool(migrated, role=Settings().app_role, min_size=1, max_size=1)  # always the same one
    try:
        found = await keys.find(one, key_id)
        assert found is not None and found.usable and found.tenant_id == ctx.tenant_id
        async with one.acquire() as conn:  # the settings the lookup made were local to its statement
            left = await conn.fetchrow(
                "SELECT current_setting('app.tenant_id', true) AS tenant, "
                "current_setting('app.api_key_id', true) AS key"
            )
            assert not left["tenant"] and not left["key"]
            # and without them the policies admit neither the key nor its principal
            assert await conn.fetchval("SELECT count(*) FROM api_keys WHERE id = $1", key_id) == 0
        async with owner_pool.acquire() as conn:
            await conn.execute("UPDATE principals SET disabled_at = now() WHERE id = $1", uuid.UUID(ctx.principal_id))
        disabled = await keys.find(one, key_id)
        assert disabled is not None and not disabled.usable
        assert await keys.find(one, "0" * 16) is None
    finally:
        await one.close()
