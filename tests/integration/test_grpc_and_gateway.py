"""The gRPC edges (health, caller context, error mapping) and the gateway's REST mapping, with the real
ingest and recall servers running in-process on real PostgreSQL."""

from __future__ import annotations

import json
import re

import asyncpg
import grpc
import httpx
import pytest
from google.protobuf import timestamp_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from engram.config import Settings, SettingsError
from engram.domain.models import CallerContext
from engram.errors import ValidationFailed
from engram.rpc.context import to_metadata
from engram.rpc.errors import from_rpc_error
from engram.rpc.server import start_server, stop_server
from engram.runtime.ports import free_port
from engram.v1 import ingest_pb2, ingest_pb2_grpc, memory_pb2, recall_pb2, recall_pb2_grpc
from services.gateway.problems import http_status
from services.ingest.app import SERVICE_NAMES, servicers
from tests.support.keys import KeyMaker


async def test_health_service_reports_serving(servers: Settings) -> None:
    for address, name in (
        (servers.ingest_addr, "engram.v1.IngestService"),
        (servers.recall_addr, "engram.v1.RecallService"),
    ):
        async with grpc.aio.insecure_channel(address) as channel:
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=name))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_calls_need_the_internal_token_and_the_caller_context(servers: Settings, tenant: CallerContext) -> None:
    token = servers.internal_token
    async with grpc.aio.insecure_channel(servers.ingest_addr) as channel:
        stub = ingest_pb2_grpc.IngestServiceStub(channel)
        # positive control: with the token and the context the call succeeds
        ok = await stub.Remember(
            ingest_pb2.RememberRequest(content="context travels in metadata"),
            metadata=to_metadata(tenant, internal_token=token),
        )
        assert ok.status == "created"
        for metadata in (
            to_metadata(tenant),
            to_metadata(tenant, internal_token="forged"),
            (("x-engram-internal-token", token or ""),),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.Remember(ingest_pb2.RememberRequest(content="who am I?"), metadata=metadata)
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_a_server_without_the_token_binds_loopback_only(app_pool: asyncpg.Pool, settings: Settings) -> None:
    """Without ENGRAM_INTERNAL_TOKEN anyone reaching the port could name any tenant and scopes: so no wide bind."""
    register = servicers(app_pool, settings)
    with pytest.raises(SettingsError) as refused:
        await start_server(f"0.0.0.0:{free_port()}", "ingest", SERVICE_NAMES, register)
    assert "ENGRAM_INTERNAL_TOKEN" in refused.value.detail and "0.0.0.0" in refused.value.detail
    for address, token in ((f"127.0.0.1:{free_port()}", None), (f"0.0.0.0:{free_port()}", "t0ken")):
        server, health = await start_server(address, "ingest", SERVICE_NAMES, register, internal_token=token)
        try:
            port = address.rsplit(":", 1)[1]
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        finally:
            await stop_server(server, health, grace_s=0)


async def test_a_second_server_on_an_address_in_use_is_refused_not_sharing_the_port(
    app_pool: asyncpg.Pool, settings: Settings
) -> None:
    """gRPC sets SO_REUSEPORT by default: a second server on the port would bind and answer half the first's calls
    ("Method not found" from a recall server on ingest's port). It must fail to bind instead."""
    address = f"127.0.0.1:{free_port()}"
    server, health = await start_server(address, "ingest", SERVICE_NAMES, servicers(app_pool, settings))
    try:
        with pytest.raises(OSError, match="cannot bind"):
            await start_server(address, "recall", ["engram.v1.RecallService"], lambda s: None)
        async with grpc.aio.insecure_channel(address) as channel:  # the first still answers
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        await stop_server(server, health, grace_s=0)


async def test_errors_cross_grpc_with_code_and_field(servers: Settings, tenant: CallerContext) -> None:
    async with grpc.aio.insecure_channel(servers.recall_addr) as channel:
        stub = recall_pb2_grpc.RecallServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.Recall(
                recall_pb2.RecallRequest(mode="semantic", query=""),
                metadata=to_metadata(tenant, internal_token=servers.internal_token),
            )
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        error = from_rpc_error(caught.value)
        assert (type(error), error.code, error.field) == (ValidationFailed, "validation_failed", "query")
        assert http_status(type(error))[0] == 422
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await stub.GetItem(
                recall_pb2.GetItemRequest(id="00000000-0000-4000-8000-00000000dead"),
                metadata=to_metadata(tenant, internal_token=servers.internal_token),
            )
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def _with_metadata(content: str, metadata: dict[str, object]) -> ingest_pb2.RememberRequest:
    request = ingest_pb2.RememberRequest(content=content)
    request.metadata.update(metadata)
    return request


NUL_REQUESTS = [
    ("Remember", ingest_pb2.RememberRequest(content="the door code is 12\x0034"), "content"),
    ("Remember", ingest_pb2.RememberRequest(content="tagged", tags=["ok", "b\x00d"]), "tags[1]"),
    ("Remember", _with_metadata("with metadata", {"k": {"deep": ["x", "y\x00"]}}), "metadata.k.deep[1]"),
    (
        "RememberBatch",
        ingest_pb2.RememberBatchRequest(
            items=[
                ingest_pb2.BatchEntry(index=0, memory=ingest_pb2.RememberRequest(content="a fine first memory")),
                ingest_pb2.BatchEntry(index=1, memory=ingest_pb2.RememberRequest(content="then a \x00")),
            ]
        ),
        "items[1].memory.content",
    ),
]


@pytest.mark.parametrize(("method", "request_message", "field"), NUL_REQUESTS)
async def test_a_nul_sent_straight_to_ingest_is_refused_naming_its_field_and_nothing_is_written(
    servers: Settings, tenant: CallerContext, owner_pool: asyncpg.Pool, method: str, request_message: object, field: str
) -> None:
    """The gateway refuses a NUL before calling a service; a client on the gRPC port got INTERNAL (PostgreSQL's text
    cannot hold it). Now INVALID_ARGUMENT naming the field, as the gateway would, and the transaction rolled back."""
    metadata = to_metadata(tenant, internal_token=servers.internal_token)
    async with grpc.aio.insecure_channel(servers.ingest_addr) as channel:
        stub = ingest_pb2_grpc.IngestServiceStub(channel)
        await stub.Remember(ingest_pb2.RememberRequest(content="a memory already there"), metadata=metadata)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await getattr(stub, method)(request_message, metadata=metadata)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    error = from_rpc_error(caught.value)
    assert (type(error), error.field) == (ValidationFailed, field)
    assert error.detail == f"{field} must not contain the NUL character (U+0000)"
    contents = await owner_pool.fetch("SELECT content FROM memory_items WHERE tenant_id = $1", tenant.tenant_id)
    assert [row["content"] for row in contents] == ["a memory already there"]


async def test_a_metadata_number_json_cannot_hold_sent_straight_to_ingest_is_refused_naming_it(
    servers: Settings, tenant: CallerContext, owner_pool: asyncpg.Pool
) -> None:
    """A Struct can carry NaN and infinities, which PostgreSQL's jsonb refuses: INTERNAL before, now
    INVALID_ARGUMENT naming where (the gateway's answer), and nothing written."""
    metadata = to_metadata(tenant, internal_token=servers.internal_token)
    observed = ingest_pb2.ObserveRequest(content="seen on a dashboard")
    observed.metadata.update({"k": [1.0, float("nan")]})
    async with grpc.aio.insecure_channel(servers.ingest_addr) as channel:
        stub = ingest_pb2_grpc.IngestServiceStub(channel)
        for method, request_message, field in (
            ("Remember", _with_metadata("with a score", {"score": float("-inf")}), "metadata.score"),
            ("Observe", observed, "metadata.k[1]"),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await getattr(stub, method)(request_message, metadata=metadata)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
            assert from_rpc_error(caught.value).field == field
    rows = await owner_pool.fetchval("SELECT count(*) FROM memory_items WHERE tenant_id = $1", tenant.tenant_id)
    assert rows == 0


async def test_a_timestamp_past_year_9999_sent_straight_to_recall_is_refused_naming_it(
    servers: Settings, tenant: CallerContext
) -> None:
    """A Timestamp's seconds reach far past what a datetime holds: INTERNAL before, now INVALID_ARGUMENT."""
    metadata = to_metadata(tenant, internal_token=servers.internal_token)
    beyond = timestamp_pb2.Timestamp(seconds=2**40)  # about the year 36812
    async with grpc.aio.insecure_channel(servers.recall_addr) as channel:
        stub = recall_pb2_grpc.RecallServiceStub(channel)
        for method, request_message, field in (
            ("ListItems", recall_pb2.ListItemsRequest(created_after=beyond), "created_after"),
            ("Search", recall_pb2.SearchRequest(query="x", filters=memory_pb2.RecallFilters(as_of=beyond)), "as_of"),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await getattr(stub, method)(request_message, metadata=metadata)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
            assert from_rpc_error(caught.value).field == field


async def test_gateway_maps_rest_to_grpc_and_problems(
    gateway: httpx.AsyncClient, owner_pool: asyncpg.Pool, tenant: CallerContext, make_key: KeyMaker
) -> None:
    gateway.headers["authorization"] = await make_key(tenant)
    created = await gateway.post(
        "/v1/remember",
        json={"content": "The gateway speaks gRPC downstream.", "tags": ["arch"], "metadata": {"ticket": 42}},
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["status"] == "created" and body["item"]["tenant_id"] == tenant.tenant_id
    assert body["item"]["metadata"] == {"ticket": 42} and body["item"]["tags"] == ["arch"]
    again = await gateway.post("/v1/remember", json={"content": "the gateway speaks gRPC downstream."})
    assert again.status_code == 200 and again.json()["status"] == "deduplicated" and again.json()["id"] == body["id"]
    fetched = await gateway.get(f"/v1/items/{body['id']}")
    assert fetched.status_code == 200 and fetched.json()["content"] == "The gateway speaks gRPC downstream."
    status = await gateway.get(f"/v1/items/{body['id']}/status")
    assert status.json()["embedding"] == "pending"

    async with owner_pool.acquire() as conn:
        before = await conn.fetchval("SELECT count(*) FROM memory_items")
    for payload, field in (
        ({"content": "x", "colour": "red"}, "colour"),
        ({"content": "x", "importance": 2}, "importance"),
        ({"kind": "fact"}, "content"),
        ({"content": "x", "kind": "gossip"}, "kind"),
    ):
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
    assert {"/v1/remember", "/v1/recall", "/v1/search", "/v1/items/{item_id}", "/v1/items/{item_id}/status"} <= set(
        openapi["paths"]
    )


async def test_trace_context_travels_from_rest_into_the_event(
    gateway: httpx.AsyncClient, owner_pool: asyncpg.Pool, tenant: CallerContext, make_key: KeyMaker
) -> None:
    auth = {"authorization": await make_key(tenant)}
    incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    traced = await gateway.post(
        "/v1/remember", json={"content": "traced write"}, headers={**auth, "traceparent": incoming}
    )
    untraced = await gateway.post(
        "/v1/remember", json={"content": "untraced write"}, headers={**auth, "traceparent": "garbage"}
    )
    async with owner_pool.acquire() as conn:
        envelopes = {
            r["subject"]: json.loads(r["envelope"])
            for r in await conn.fetch(
                "SELECT envelope->>'subject' AS subject, envelope FROM outbox WHERE tenant_id = $1::uuid",
                tenant.tenant_id,
            )
        }
    assert envelopes[traced.json()["id"]]["traceparent"] == incoming
    fresh = envelopes[untraced.json()["id"]]["traceparent"]
    assert re.fullmatch(r"00-[0-9a-f]{32}-[0-9a-f]{16}-01", fresh) and fresh[3:35] != incoming[3:35]


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
async def test_a_nul_in_a_query_sent_straight_to_recall_is_refused_naming_the_query(
    servers: Settings, tenant: CallerContext, mode: str
) -> None:
    metadata = to_metadata(tenant, internal_token=servers.internal_token)
    async with grpc.aio.insecure_channel(servers.recall_addr) as channel:
        stub = recall_pb2_grpc.RecallServiceStub(channel)
        answer = await stub.Recall(recall_pb2.RecallRequest(mode=mode, query="door code"), metadata=metadata)
        assert answer.mode == mode  # positive control: the same call without the NUL is answered
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.Recall(recall_pb2.RecallRequest(mode=mode, query="door\x00code"), metadata=metadata)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert from_rpc_error(caught.value).field == "query"
