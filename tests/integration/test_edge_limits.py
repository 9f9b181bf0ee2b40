"""Security review findings 5 and 6 through the gateway: oversized payloads are refused before anything is
written and large answers still arrive; a caller without a valid key costs a bounded number of key lookups,
and /ready opens no new connections."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest_asyncio

from engram.config import Settings
from engram.domain.models import CallerContext
from services.gateway.app import create_app
from services.ingest.service import IngestService, RememberCommand
from tests.support.keys import KeyMaker
from tests.support.tenants import create_tenant

FILLER = "Deploy notes mention the ledger, the queue and the nightly backfill. "


async def _items(owner_pool: asyncpg.Pool, tenant_id: str) -> int:
    async with owner_pool.acquire() as conn:
        return int(await conn.fetchval("SELECT count(*) FROM memory_items WHERE tenant_id = $1", tenant_id))


@pytest_asyncio.fixture
async def limited_gateway(servers: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, object]]:
    """The gateway with a per-IP limit of 10 a minute; yields the client and the app (for its state)."""
    app = create_app(servers.model_copy(update={"ip_rate_limit_per_minute": 10}))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gw") as client:
            yield client, app


async def test_startup_recall_of_many_pinned_items_near_the_caps_still_arrives(
    gateway: httpx.AsyncClient,
    servers: Settings,
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    tenant: CallerContext,
    make_key: KeyMaker,
) -> None:
    """140 pinned memories of ~16 KB content and ~16 KB metadata: a 4.5 MB startup answer, over gRPC's
    default 4 MiB receive limit, which used to fail the whole read with RESOURCE_EXHAUSTED."""
    ingest = IngestService(app_pool, servers)
    content = (FILLER * 240)[:15_900]
    metadata = {"notes": "m" * 15_800}
    for n in range(140):
        await ingest.remember(tenant, RememberCommand(content=f"{n}: {content}", pinned=True, metadata=metadata))
    auth = {"authorization": await make_key(tenant)}
    body = {"mode": "startup", "item_budget": 200, "byte_budget": 10_000_000, "token_budget": 10_000_000}
    answer = await gateway.post("/v1/recall", json=body, headers=auth)
    assert answer.status_code == 200, answer.text[:300]
    assert len(answer.json()["items"]) == 140
    assert len(answer.content) > 4 * 1024 * 1024

    # the byte budget counts metadata: two items' content alone fits 40 KB, with their metadata only one does
    small = await gateway.post("/v1/recall", json={**body, "byte_budget": 40_000}, headers=auth)
    assert small.status_code == 200 and len(small.json()["items"]) == 1


async def test_oversized_metadata_and_source_uri_are_refused_and_nothing_is_written(
    gateway: httpx.AsyncClient, owner_pool: asyncpg.Pool, tenant: CallerContext, make_key: KeyMaker
) -> None:
    auth = {"authorization": await make_key(tenant)}
    fine = {"content": "The ledger moved to Postgres.", "metadata": {"a": {"b": [1, 2]}}, "source_uri": "https://x/y"}
    assert (await gateway.post("/v1/remember", json=fine, headers=auth)).status_code == 201  # populated first
    deep: dict[str, object] = {}
    node = deep
    for _ in range(20):
        node["n"] = {}
        node = node["n"]  # type: ignore[assignment]
    refused = [
        ("metadata", {"content": "Big metadata.", "metadata": {"blob": "x" * 17_000}}),
        ("metadata", {"content": "Deep metadata.", "metadata": deep}),
        ("source_uri", {"content": "Long source.", "source_uri": "https://example.com/" + "p" * 2_100}),
    ]
    for route in ("/v1/remember", "/v1/observe"):
        for field, body in refused:
            answer = await gateway.post(route, json=body, headers=auth)
            assert answer.status_code == 422 and answer.json()["field"] == field, (route, field, answer.text)
    batch = await gateway.post("/v1/remember/batch", json={"items": [body for _, body in refused]}, headers=auth)
    assert batch.status_code == 200, batch.text
    assert [(r["status"], r["error"]["field"]) for r in batch.json()["results"]] == [
        (422, field) for field, _ in refused
    ]
    assert await _items(owner_pool, tenant.tenant_id) == 1


async def test_a_request_body_over_the_limit_answers_413(
    gateway: httpx.AsyncClient, owner_pool: asyncpg.Pool, tenant: CallerContext, make_key: KeyMaker
) -> None:
    auth = {"authorization": await make_key(tenant)}
    assert (await gateway.post("/v1/remember", json={"content": "small"}, headers=auth)).status_code == 201
    huge = {"content": "big", "metadata": {"blob": "x" * 1_100_000}}
    answer = await gateway.post("/v1/remember", json=huge, headers=auth)
    assert answer.status_code == 413
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["code"] == "payload_too_large"

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"content": "chunked", "metadata": {"blob": "'
        for _ in range(20):
            yield b"y" * 60_000
        yield b'"}}'

    streamed = await gateway.post(
        "/v1/remember", content=chunks(), headers={**auth, "content-type": "application/json"}
    )
    assert streamed.status_code == 413
    assert await _items(owner_pool, tenant.tenant_id) == 1


async def test_unknown_keys_cost_a_bounded_number_of_lookups(
    limited_gateway: tuple[httpx.AsyncClient, object], owner_pool: asyncpg.Pool, make_key: KeyMaker
) -> None:
    client, app = limited_gateway
    authenticator = app.state.authenticator  # type: ignore[attr-defined]
    bogus = f"Bearer eng_{secrets.token_hex(8)}_{secrets.token_urlsafe(32)}"
    repeated = [(await client.get("/v1/trash", headers={"authorization": bogus})).status_code for _ in range(8)]
    assert repeated == [401] * 8
    assert authenticator.lookups == 1  # the same unknown key id: looked up once, then answered from memory

    statuses = []
    for _ in range(50):
        random_key = f"Bearer eng_{secrets.token_hex(8)}_{secrets.token_urlsafe(32)}"
        statuses.append((await client.get("/v1/trash", headers={"authorization": random_key})).status_code)
    assert statuses.count(401) == 2 and statuses.count(429) == 48  # 10 a minute per address, 8 used above
    assert authenticator.lookups == 3
    limited = await client.get("/v1/trash", headers={"authorization": bogus})
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    assert limited.json()["code"] == "rate_limited"
    assert (await client.get("/health")).status_code == 200  # probes are not counted


async def test_the_per_ip_limit_leaves_a_valid_caller_its_requests(
    limited_gateway: tuple[httpx.AsyncClient, object], owner_pool: asyncpg.Pool, make_key: KeyMaker
) -> None:
    client, _ = limited_gateway
    auth = {"authorization": await make_key(await create_tenant(owner_pool))}
    statuses = [(await client.get("/v1/trash", headers=auth)).status_code for _ in range(11)]
    assert statuses == [200] * 10 + [429]


async def test_ready_opens_no_new_database_connections(servers: Settings, owner_pool: asyncpg.Pool, js: object) -> None:
    async def sessions() -> int:
        """Sessions ever established to the database (a fresh statistics snapshot each time)."""
        async with owner_pool.acquire() as conn:
            await conn.execute("SELECT pg_stat_clear_snapshot()")
            return int(await conn.fetchval("SELECT sessions FROM pg_stat_database WHERE datname = current_database()"))

    app = create_app(servers.model_copy(update={"readiness_cache_s": 0.0}))  # every call probes
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gw") as client:
            first = await client.get("/ready")
            assert first.status_code == 200, first.text
            assert first.json()["checks"] == {"database": "ok", "nats": "ok", "ingest": "ok", "recall": "ok"}
            before = await sessions()
            for _ in range(10):
                assert (await client.get("/ready")).status_code == 200
            assert await sessions() == before


async def test_an_unknown_http_method_is_labelled_other(gateway: httpx.AsyncClient) -> None:
    await gateway.request("BREW", "/v1/items")
    metrics = (await gateway.get("/metrics")).text
    assert 'method="other"' in metrics
    assert 'method="BREW"' not in metrics
