"""Tenant, workspace and visibility isolation through REST, on every read and write path, each with a
positive control (the owner sees what the others must not)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import asyncpg
import httpx
import pytest_asyncio

from engram.config import DEFAULT_ADMIN_ID, DEFAULT_TENANT_ID, Settings
from engram.db import identity
from engram.embeddings.provider import EmbeddingProvider
from services.embedder.service import EmbedderService
from tests.support.outbox import deliver

QUERY = "Bluebird"
READ_MODES = ("keyword", "semantic", "hybrid")


@dataclass
class World:
    alice: dict[str, str]
    bob: dict[str, str]
    viewer: dict[str, str]
    carol: dict[str, str]
    secret_workspace: str
    items: dict[str, str]  # name → id
    ids: dict[str, str]  # tenant_a, tenant_b, alice, carol, tag


async def _key(pool: asyncpg.Pool, tenant_id: str, principal_id: str) -> dict[str, str]:
    issued = await identity.create_key(pool, tenant_id, principal_id, ["read", "write"], "isolation")
    return {"authorization": f"Bearer {issued.key}"}


@pytest_asyncio.fixture
async def world(
    gateway: httpx.AsyncClient,
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    embedder: EmbeddingProvider,
) -> World:
    tag = uuid.uuid4().hex[:8]
    tenant_a = await identity.create_tenant(app_pool, f"iso-a-{tag}")
    tenant_b = await identity.create_tenant(app_pool, f"iso-b-{tag}")
    alice = await identity.create_principal(app_pool, tenant_a, "alice", "user")
    bob = await identity.create_principal(app_pool, tenant_a, "bob", "user")
    viewer = await identity.create_principal(app_pool, tenant_a, "vera", "user")
    carol = await identity.create_principal(app_pool, tenant_b, "carol", "user")
    secret = await identity.create_workspace(app_pool, tenant_a, "secret")
    await identity.add_member(app_pool, tenant_a, secret, alice, "owner")
    await identity.add_member(app_pool, tenant_a, secret, viewer, "viewer")
    keys = {
        name: await _key(app_pool, tenant, principal)
        for name, tenant, principal in (
            ("alice", tenant_a, alice),
            ("bob", tenant_a, bob),
            ("viewer", tenant_a, viewer),
            ("carol", tenant_b, carol),
        )
    }
    items = {}
    for name, body in (
        ("tenant_wide", {"content": "The launch code name is Bluebird.", "visibility": "tenant"}),
        ("private", {"content": "Private note: Bluebird dentist appointment on Friday.", "visibility": "private"}),
        ("secret_ws", {"content": "Bluebird budget is forty thousand.", "workspace_id": secret}),
    ):
        response = await gateway.post("/v1/remember", json=body, headers=keys["alice"])
        assert response.status_code == 201, response.text
        items[name] = response.json()["id"]
    await deliver(owner_pool, EmbedderService(app_pool, settings, embedder).handle, tenant=tenant_a)  # embed them
    ids = {"tenant_a": tenant_a, "tenant_b": tenant_b, "alice": alice, "carol": carol, "tag": tag}
    return World(keys["alice"], keys["bob"], keys["viewer"], keys["carol"], secret, items, ids)


async def _seen(gateway: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, set[str]]:
    """Which item ids each read path returns to this caller."""
    seen: dict[str, set[str]] = {}
    for mode in READ_MODES:
        recall = await gateway.post(
            "/v1/recall", json={"query": QUERY, "mode": mode, "item_budget": 50}, headers=headers
        )
        search = await gateway.post("/v1/search", json={"query": QUERY, "mode": mode, "limit": 50}, headers=headers)
        seen[f"recall:{mode}"] = {hit["item"]["id"] for hit in recall.json()["items"]}
        seen[f"search:{mode}"] = {hit["item"]["id"] for hit in search.json()["items"]}
    startup = await gateway.post("/v1/recall", json={"mode": "startup", "item_budget": 50}, headers=headers)
    seen["recall:startup"] = {hit["item"]["id"] for hit in startup.json()["items"]}
    return seen


async def _readable(gateway: httpx.AsyncClient, headers: dict[str, str], item_id: str) -> set[int]:
    return {
        (await gateway.get(f"/v1/items/{item_id}", headers=headers)).status_code,
        (await gateway.get(f"/v1/items/{item_id}/status", headers=headers)).status_code,
    }


async def test_the_author_sees_everything_it_wrote(gateway: httpx.AsyncClient, world: World) -> None:
    everything = set(world.items.values())
    for path, ids in (await _seen(gateway, world.alice)).items():
        assert everything <= ids, path
    for item_id in everything:
        assert await _readable(gateway, world.alice, item_id) == {200}


async def test_another_principal_sees_only_tenant_wide_items(gateway: httpx.AsyncClient, world: World) -> None:
    for path, ids in (await _seen(gateway, world.bob)).items():
        assert world.items["tenant_wide"] in ids, path  # positive control
        assert world.items["private"] not in ids, path
        assert world.items["secret_ws"] not in ids, path
    assert await _readable(gateway, world.bob, world.items["tenant_wide"]) == {200}
    for hidden in ("private", "secret_ws"):
        assert await _readable(gateway, world.bob, world.items[hidden]) == {404}


async def test_workspace_members_see_workspace_items(gateway: httpx.AsyncClient, world: World) -> None:
    seen = await _seen(gateway, world.viewer)
    for path, ids in seen.items():
        assert world.items["secret_ws"] in ids, path
        assert world.items["private"] not in ids, path


async def test_another_tenant_sees_nothing(gateway: httpx.AsyncClient, world: World) -> None:
    for path, ids in (await _seen(gateway, world.carol)).items():
        assert not ids & set(world.items.values()), path
    for item_id in world.items.values():
        missing = await gateway.get(f"/v1/items/{item_id}", headers=world.carol)
        assert missing.status_code == 404 and missing.json()["detail"] == f"no item {item_id}"
        assert await _readable(gateway, world.carol, item_id) == {404}


async def test_writes_need_a_writing_membership(
    gateway: httpx.AsyncClient, world: World, owner_pool: asyncpg.Pool
) -> None:
    body = {"content": "Bluebird moved to Thursday.", "workspace_id": world.secret_workspace}
    async with owner_pool.acquire() as conn:
        before = await conn.fetchval(
            "SELECT count(*) FROM memory_items WHERE workspace_id = $1::uuid", world.secret_workspace
        )
    not_member = await gateway.post("/v1/remember", json=body, headers=world.bob)
    assert not_member.status_code == 404 and not_member.json()["field"] == "workspace_id"
    read_only = await gateway.post("/v1/remember", json=body, headers=world.viewer)
    assert read_only.status_code == 403 and read_only.json()["code"] == "workspace_read_only"
    other_tenant = await gateway.post("/v1/remember", json=body, headers=world.carol)
    assert other_tenant.status_code == 404
    async with owner_pool.acquire() as conn:
        assert (
            await conn.fetchval(
                "SELECT count(*) FROM memory_items WHERE workspace_id = $1::uuid", world.secret_workspace
            )
            == before
        )
    member = await gateway.post("/v1/remember", json=body, headers=world.alice)
    assert member.status_code == 201  # positive control


async def test_a_public_memory_needs_the_publish_scope(
    gateway: httpx.AsyncClient, world: World, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    """``write`` alone (an untrusted agent's key included) cannot put a memory where every accepting tenant
    recalls it."""
    tenant_a = world.ids["tenant_a"]
    agent = await identity.create_principal(app_pool, tenant_a, "scraper", "agent")
    agent_key = await _key(app_pool, tenant_a, agent)
    content = f"Bluebird press release {world.ids['tag']} is public."
    for who in (world.alice, agent_key):
        refused = await gateway.post("/v1/remember", json={"content": content, "visibility": "public"}, headers=who)
        assert refused.status_code == 403, refused.text
        assert refused.json()["code"] == "insufficient_scope" and refused.json()["field"] == "visibility"
        assert "publish" in refused.json()["detail"]
    async with owner_pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM memory_items WHERE content = $1", content) == 0
    publisher = await identity.create_key(app_pool, tenant_a, world.ids["alice"], ["read", "write", "publish"], "pub")
    allowed = await gateway.post(  # positive control
        "/v1/remember",
        json={"content": content, "visibility": "public"},
        headers={"authorization": f"Bearer {publisher.key}"},
    )
    assert allowed.status_code == 201 and allowed.json()["item"]["visibility"] == "public"
    # widening an existing memory to public through PATCH needs the scope too
    own = await gateway.post("/v1/remember", json={"content": f"Draft {world.ids['tag']} note."}, headers=world.alice)
    widened = await gateway.patch(f"/v1/items/{own.json()['id']}", json={"visibility": "public"}, headers=world.alice)
    assert widened.status_code == 403 and widened.json()["code"] == "insufficient_scope", widened.text
    assert (await gateway.get(f"/v1/items/{own.json()['id']}", headers=world.alice)).json()["visibility"] != "public"
    published = await gateway.patch(
        f"/v1/items/{own.json()['id']}",
        json={"visibility": "public"},
        headers={"authorization": f"Bearer {publisher.key}"},
    )
    assert published.status_code == 200 and published.json()["visibility"] == "public"


async def _keyword_hit(gateway: httpx.AsyncClient, headers: dict[str, str], item_id: str) -> dict:  # type: ignore[type-arg]
    answer = await gateway.post(
        "/v1/recall", json={"query": QUERY, "mode": "keyword", "item_budget": 50}, headers=headers
    )
    return next(hit for hit in answer.json()["items"] if hit["item"]["id"] == item_id)  # type: ignore[no-any-return]


async def test_public_items_reach_only_tenants_that_accept_them(
    gateway: httpx.AsyncClient,
    world: World,
    app_pool: asyncpg.Pool,
    settings: Settings,
    owner_pool: asyncpg.Pool,
    embedder: EmbeddingProvider,
) -> None:
    tenant_a, tenant_b = world.ids["tenant_a"], world.ids["tenant_b"]
    publisher = await identity.create_key(app_pool, tenant_a, world.ids["alice"], ["read", "write", "publish"], "pub")
    published = await gateway.post(
        "/v1/remember",
        json={"content": "Bluebird press release is public.", "visibility": "public"},
        headers={"authorization": f"Bearer {publisher.key}"},
    )
    assert published.status_code == 201, published.text
    public_id = published.json()["id"]
    await deliver(owner_pool, EmbedderService(app_pool, settings, embedder).handle, subjects=[public_id])
    # not published: the public item stays inside its tenant
    assert public_id in (await _seen(gateway, world.bob))["recall:keyword"]  # positive control
    for path, ids in (await _seen(gateway, world.carol)).items():
        assert public_id not in ids, path
    assert await _readable(gateway, world.carol, public_id) == {404}

    platform = await identity.create_key(app_pool, DEFAULT_TENANT_ID, DEFAULT_ADMIN_ID, ["admin"], "publisher")
    admin = {"authorization": f"Bearer {platform.key}"}
    enabled = await gateway.patch(
        "/v1/admin/tenant-config", json={"tenant_id": tenant_a, "public_enabled": True}, headers=admin
    )
    try:
        assert enabled.status_code == 200 and enabled.json()["public_enabled"] is True
        # published, but tenant B has not opted in: nothing of tenant A reaches it
        for path, ids in (await _seen(gateway, world.carol)).items():
            assert public_id not in ids, path
        assert await _readable(gateway, world.carol, public_id) == {404}

        b_admin = await identity.create_key(app_pool, tenant_b, world.ids["carol"], ["admin"], "b-admin")
        opted = await gateway.patch(
            "/v1/admin/tenant-config",
            json={"recall": {"accept_public": True}},
            headers={"authorization": f"Bearer {b_admin.key}"},
        )
        assert opted.status_code == 200 and opted.json()["config"]["recall"]["accept_public"] is True
        for path, ids in (await _seen(gateway, world.carol)).items():
            # a query finds it; another tenant's startup working set stays its own
            assert (public_id in ids) == (path != "recall:startup"), path
            assert not ids & set(world.items.values()), path  # the tenant's other items stay hidden
        assert await _readable(gateway, world.carol, public_id) == {200}
        foreign = await _keyword_hit(gateway, world.carol, public_id)
        assert foreign["reasons"][0] == (
            f"public memory of another tenant, 'iso-a-{world.ids['tag']}' ({tenant_a}): trust capped at 0.50"
        )
        assert "trust 0.50 (authority 50, explicit)" in foreign["reasons"]
        home = await _keyword_hit(gateway, world.bob, public_id)  # in its own tenant: full trust, no origin
        assert not any(r.startswith("public memory of another tenant") for r in home["reasons"])
        assert not any(r.startswith("trust 0.50") for r in home["reasons"])
    finally:  # other tests' tenants share this database: publish nothing beyond this test
        await identity.set_tenant_public(app_pool, tenant_a, False)
