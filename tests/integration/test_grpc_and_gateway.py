"""The gRPC edges (health, caller context, error mapping) and the gateway's REST mapping, with the real
ingest and recall servers running in-process on real PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import grpc
import httpx
import pytest
import pytest_asyncio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from engram.config import DEFAULT_TENANT_ID, Settings
from engram.domain.models import CallerContext
from engram.embeddings.provider import EmbeddingProvider
from engram.rpc.context import to_metadata
from engram.rpc.errors import from_rpc_error
from engram.rpc.server import start_server, stop_server
from engram.runtime.ports import free_port
from engram.v1 import ingest_pb2, ingest_pb2_grpc, recall_pb2, recall_pb2_grpc
from services.gateway.app import create_app
from services.ingest.service import IngestService
from services.ingest.servicer import IngestServicer
from services.recall.service import RecallService
from services.recall.servicer import RecallServicer


@pytest_asyncio.fixture
async def servers(app_pool: asyncpg.Pool, settings: Settings,
                  embedder: EmbeddingProvider) -> AsyncIterator[Settings]:
    configured = settings.model_copy(update={"ingest_addr": f"127.0.0.1:{free_port()}",
                                             "recall_addr": f"127.0.0.1:{free_port()}"})
    ingest = await start_server(
        configured.ingest_addr, "ingest", ["engram.v1.IngestService"],
        lambda s: ingest_pb2_grpc.add_IngestServiceServicer_to_server(
            IngestServicer(IngestService(app_pool, configured)), s))
    recall = await start_server(
        configured.recall_addr, "recall", ["engram.v1.RecallService"],
        lambda s: recall_pb2_grpc.add_RecallServiceServicer_to_server(
            RecallServicer(RecallService(app_pool, configured, embedder)), s))
    yield configured
    for server, health in (ingest, recall):
        await stop_server(server, health, grace_s=1)


async def test_health_service_reports_serving(servers: Settings) -> None:
    for address, name in ((servers.ingest_addr, "engram.v1.IngestService"),
                          (servers.recall_addr, "engram.v1.RecallService")):
        async with grpc.aio.insecure_channel(address) as channel:
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=name))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_calls_without_caller_context_are_refused(servers: Settings, tenant: CallerContext) -> None:
    async with grpc.aio.insecure_channel(servers.ingest_addr) as channel:
        stub = ingest_pb2_grpc.IngestServiceStub(channel)
        # positive control: with the context the same call succeeds
        ok = await stub.Remember(ingest_pb2.RememberRequest(content="context travels in metadata"),
                                 metadata=to_metadata(tenant))
        assert ok.status == "created"
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.Remember(ingest_pb2.RememberRequest(content="who am I?"))
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_errors_cross_grpc_with_code_and_field(servers: Settings, tenant: CallerContext) -> None:
    async with grpc.aio.insecure_channel(servers.recall_addr) as channel:
        stub = recall_pb2_grpc.RecallServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.Recall(recall_pb2.RecallRequest(mode="semantic", query=""), metadata=to_metadata(tenant))
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        error = from_rpc_error(caught.value)
        assert (error.code, error.field, error.http_status) == ("validation_failed", "query", 422)
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await stub.GetItem(recall_pb2.GetItemRequest(id="00000000-0000-4000-8000-00000000dead"),
                               metadata=to_metadata(tenant))
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND


@pytest_asyncio.fixture
async def gateway(servers: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(servers)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
            yield client


async def test_gateway_maps_rest_to_grpc_and_problems(gateway: httpx.AsyncClient, owner_pool: asyncpg.Pool) -> None:
    created = await gateway.post("/v1/remember", json={"content": "The gateway speaks gRPC downstream.",
                                                       "tags": ["arch"], "metadata": {"ticket": 42}})
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["status"] == "created" and body["item"]["tenant_id"] == DEFAULT_TENANT_ID
    assert body["item"]["metadata"] == {"ticket": 42} and body["item"]["tags"] == ["arch"]
    again = await gateway.post("/v1/remember", json={"content": "the gateway speaks gRPC downstream."})
    assert again.status_code == 200 and again.json()["status"] == "deduplicated" and again.json()["id"] == body["id"]
    fetched = await gateway.get(f"/v1/items/{body['id']}")
    assert fetched.status_code == 200 and fetched.json()["content"] == "The gateway speaks gRPC downstream."
    status = await gateway.get(f"/v1/items/{body['id']}/status")
    assert status.json()["embedding"] == "pending"

    async with owner_pool.acquire() as conn:
        before = await conn.fetchval("SELECT count(*) FROM memory_items")
    for payload, field in (({"content": "x", "colour": "red"}, "colour"),
                           ({"content": "x", "importance": 2}, "importance"),
                           ({"kind": "fact"}, "content"), ({"content": "x", "kind": "gossip"}, "kind")):
        refused = await gateway.post("/v1/remember", json=payload)
        assert refused.status_code == 422, payload
        assert refused.headers["content-type"] == "application/problem+json"
        assert refused.json()["code"] == "validation_failed" and refused.json()["field"] == field
    async with owner_pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM memory_items") == before

    missing = await gateway.get("/v1/items/00000000-0000-4000-8000-00000000dead")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    bad_mode = await gateway.post("/v1/recall", json={"mode": "psychic", "query": "x"})
    assert bad_mode.status_code == 422 and bad_mode.json()["field"] == "mode"
    zero = await gateway.post("/v1/search", json={"query": "gateway", "limit": 0})
    assert zero.status_code == 422 and zero.json()["field"] == "limit"
    bad_workspace = await gateway.post("/v1/recall", json={"query": "gateway", "workspace_id": "abc"})
    assert bad_workspace.status_code == 422 and bad_workspace.json()["field"] == "workspace_id"
    openapi = (await gateway.get("/openapi.json")).json()
    assert {"/v1/remember", "/v1/recall", "/v1/search", "/v1/items/{item_id}",
            "/v1/items/{item_id}/status"} <= set(openapi["paths"])
