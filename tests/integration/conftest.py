"""Fixtures for tests that go through gRPC or the gateway: the real ingest (IngestService and Admin) and recall
servers in-process (with the internal token on), and the gateway app on top of them through httpx's ASGI
transport; a JetStream context with this test's own streams; and API keys for the tests' callers."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import asyncpg
import httpx
import nats
import pytest_asyncio
from nats.js import JetStreamContext

from engram.config import Settings
from engram.db import identity
from engram.domain.models import CallerContext
from engram.embeddings.provider import EmbeddingProvider
from engram.events.stream import deadletter_stream, ensure_streams
from engram.rpc.server import start_server, stop_server
from engram.runtime.ports import free_ports
from engram.v1 import recall_pb2_grpc
from services.gateway.app import create_app
from services.ingest.app import SERVICE_NAMES, servicers
from services.recall.service import RecallService
from services.recall.servicer import RecallServicer
from tests.support.gateway import Headers
from tests.support.keys import KeyMaker


@pytest_asyncio.fixture
async def js(settings: Settings) -> AsyncIterator[JetStreamContext]:
    assert settings.nats_url
    nc = await nats.connect(settings.nats_url)
    context = nc.jetstream()
    await ensure_streams(context, settings)
    yield context
    for stream in (settings.events_stream, deadletter_stream(settings)):
        await context.delete_stream(stream)
    await nc.close()


@pytest_asyncio.fixture
async def servers(app_pool: asyncpg.Pool, settings: Settings, embedder: EmbeddingProvider) -> AsyncIterator[Settings]:
    ingest_port, recall_port = free_ports(2)  # distinct: two picks one after the other may be the same port
    configured = settings.model_copy(
        update={
            "ingest_addr": f"127.0.0.1:{ingest_port}",
            "recall_addr": f"127.0.0.1:{recall_port}",
            "internal_token": secrets.token_urlsafe(16),
        }
    )
    ingest = await start_server(
        configured.ingest_addr,
        "ingest",
        SERVICE_NAMES,
        servicers(app_pool, configured),
        internal_token=configured.internal_token,
    )
    recall = await start_server(
        configured.recall_addr,
        "recall",
        ["engram.v1.RecallService"],
        lambda s: recall_pb2_grpc.add_RecallServiceServicer_to_server(
            RecallServicer(RecallService(app_pool, configured, embedder)), s
        ),
        internal_token=configured.internal_token,
    )
    yield configured
    for server, health in (ingest, recall):
        await stop_server(server, health, grace_s=1)


@pytest_asyncio.fixture
async def gateway(servers: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The gateway with authentication on; callers pass their own Authorization header."""
    app = create_app(servers)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
            yield client


@pytest_asyncio.fixture
async def make_key(app_pool: asyncpg.Pool) -> KeyMaker:
    """``await make_key(ctx, scopes)`` → an Authorization header value for that principal."""

    async def make(ctx: CallerContext, scopes: list[str] | None = None) -> str:
        issued = await identity.create_key(
            app_pool, ctx.tenant_id, ctx.principal_id, scopes or ["read", "write"], "test"
        )
        return f"Bearer {issued.key}"

    return make


@pytest_asyncio.fixture
async def who(tenant: CallerContext, make_key: KeyMaker) -> Headers:
    """The headers of the ``tenant`` fixture's principal with a read, write and admin key: a caller that writes,
    reads and tunes its own tenant's config."""
    return {"authorization": await make_key(tenant, ["read", "write", "admin"])}
