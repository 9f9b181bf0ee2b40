"""Back-pressure: while NATS is down the outbox grows; past ENGRAM_MAX_OUTBOX_BACKLOG remember answers 503 with
Retry-After and writes nothing; once the relay has drained the backlog, remember works again. Real ingest
server, gateway, relay, PostgreSQL and NATS."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass

import asyncpg
import httpx
import pytest
import pytest_asyncio

from engram.config import Settings
from engram.domain.models import CallerContext
from engram.events.backlog import RETRY_AFTER_S, Backlog
from engram.rpc.server import start_server, stop_server
from engram.runtime.ports import free_port
from services.gateway.app import create_app
from services.ingest.app import SERVICE_NAMES, run_relay, servicers
from tests.support.keys import KeyMaker
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(120)


@dataclass
class Stack:
    settings: Settings
    backlog: Backlog
    gateway: httpx.AsyncClient


@pytest_asyncio.fixture
async def stack(app_pool: asyncpg.Pool, settings: Settings) -> AsyncIterator[Stack]:
    """Ingest (whose remember checks ``backlog``) and the gateway; the relay is the test's to run."""
    configured = settings.model_copy(
        update={"ingest_addr": f"127.0.0.1:{free_port()}", "internal_token": secrets.token_urlsafe(16)}
    )
    backlog = Backlog(interval_s=0)  # every relay round counts afresh
    await backlog.refresh(app_pool)
    # the test database holds other tests' unsent rows: the bound sits just above what is there already
    backlog.limit = backlog.unsent + 2
    server = await start_server(
        configured.ingest_addr,
        "ingest",
        SERVICE_NAMES,
        servicers(app_pool, configured, backlog=backlog),
        internal_token=configured.internal_token,
    )
    app = create_app(configured)
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
                yield Stack(configured, backlog, client)
    finally:
        await stop_server(*server, grace_s=0)


async def _count(owner_pool: asyncpg.Pool, tenant: CallerContext) -> tuple[int, int]:
    async with owner_pool.acquire() as conn:
        row = await conn.fetchrow(
            "SELECT (SELECT count(*) FROM memory_items WHERE tenant_id = $1) AS items, "
            "(SELECT count(*) FROM outbox WHERE tenant_id = $1) AS events",
            tenant.tenant_id,
        )
    assert row is not None
    return int(row["items"]), int(row["events"])


async def test_remember_is_refused_while_the_backlog_is_over_its_bound_and_admitted_once_drained(
    stack: Stack, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, tenant: CallerContext, make_key: KeyMaker
) -> None:
    headers = {"Authorization": await make_key(tenant)}

    async def remember(content: str) -> httpx.Response:
        return await stack.gateway.post("/v1/remember", json={"content": content}, headers=headers)

    # NATS is down: the relay keeps trying to connect, while ingest's watcher counts the backlog
    stop = asyncio.Event()
    watcher = asyncio.create_task(stack.backlog.watch(app_pool, stop))
    down = stack.settings.model_copy(update={"nats_url": f"nats://127.0.0.1:{free_port()}"})
    relay = asyncio.create_task(run_relay(down, app_pool, stop, stack.backlog))
    try:
        for n in range(3):  # each memory queues its event(s): the backlog passes the bound
            assert (await remember(f"Deploy window number {n} is on Thursday.")).status_code == 201
        limit = stack.backlog.limit
        await eventually(lambda: stack.backlog.unsent > limit, timeout=30, message="the backlog was never counted")
        before = await _count(owner_pool, tenant)
        refused = await remember("One more memory while NATS is away.")
        assert refused.status_code == 503, refused.text
        assert refused.json()["code"] == "backlog_full" and "ENGRAM_MAX_OUTBOX_BACKLOG" in refused.json()["detail"]
        assert refused.headers["Retry-After"] == str(int(RETRY_AFTER_S))
        # the other ways of storing a memory are held back too
        observed = await stack.gateway.post(
            "/v1/observe", json={"content": "A turn while NATS is away."}, headers=headers
        )
        batch = await stack.gateway.post(
            "/v1/remember/batch", json={"items": [{"content": "A batched memory while NATS is away."}]}, headers=headers
        )
        for answer in (observed, batch):
            assert answer.status_code == 503 and answer.json()["code"] == "backlog_full", answer.text
        assert await _count(owner_pool, tenant) == before  # nothing written
    finally:
        relay.cancel()  # as ingest does with a relay stuck connecting
        with contextlib.suppress(asyncio.CancelledError):
            await relay

    # NATS is back: the relay publishes the waiting rows, the figure falls, remember is admitted again
    relay = asyncio.create_task(run_relay(stack.settings, app_pool, stop, stack.backlog))
    try:
        await eventually(lambda: stack.backlog.unsent <= limit, timeout=30, message="the backlog never drained")
        assert (await remember("One more memory now that NATS is back.")).status_code == 201
    finally:
        stop.set()
        await asyncio.wait_for(relay, 10)
        await watcher
