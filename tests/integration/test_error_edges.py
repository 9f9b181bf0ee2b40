"""The error edges end to end without a database: an error raised in a servicer method behind ``start_server``
reaches the gateway as the same class, code, field and retry delay, and is answered with the HTTP status the
gateway's table gives that class. The caller context reaches the method through ``caller()``."""

from __future__ import annotations

import asyncio
import secrets
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import asyncpg
import grpc
import httpx
import pytest
import pytest_asyncio
from fastapi import FastAPI
from prometheus_client import REGISTRY

from engram.config import Settings
from engram.domain.models import CallerContext
from engram.errors import (
    Conflict,
    EngramError,
    NotFound,
    PermissionDenied,
    RateLimited,
    Unauthenticated,
    Unavailable,
    ValidationFailed,
)
from engram.rpc.context import caller, to_metadata
from engram.rpc.errors import from_rpc_error
from engram.rpc.server import start_server, stop_server
from engram.runtime.ports import free_port
from engram.v1 import recall_pb2, recall_pb2_grpc
from services.gateway import problems
from services.gateway.clients import Downstream


class ReadOnlyWorkspace(PermissionDenied):
    """A subclass only this process knows: it crosses as its nearest known ancestor."""

    code = "workspace_read_only"


RAISED: dict[str, Exception] = {
    "validation": ValidationFailed("query is required for this mode", field="query"),
    "not_found": NotFound("no item 42"),
    "unauthenticated": Unauthenticated("who are you?"),
    "authority": PermissionDenied("too little authority", field="supersedes", code="authority_too_low"),
    "subclass": ReadOnlyWorkspace("the workspace is read-only", field="workspace_id"),
    "conflict": Conflict("a tenant named 'acme' exists", field="name", code="name_taken"),
    "rate": RateLimited("slow down", retry_after_s=2.5),
    "unavailable": Unavailable("the embedding endpoint is down"),
    "internal": EngramError("an invariant broke", code="broken_invariant"),
    "lost_connection": ConnectionRefusedError("connection refused"),
    "database_shutdown": asyncpg.AdminShutdownError("terminating connection due to administrator command"),
    "database_starting": asyncpg.CannotConnectNowError("the database system is starting up"),
    # what asyncpg raises on a connection the server dropped in the middle of an operation (seen under load
    # while PostgreSQL restarts: tests/e2e/test_reliability.py)
    "connection_broken_mid_operation": asyncpg.InternalClientError(
        "cannot switch to state 15; another operation (2) is in progress"
    ),
    "bug": KeyError("a bug"),
}


@dataclass(frozen=True)
class Expected:
    cls: type[EngramError]
    code: str
    field: str | None
    status: grpc.StatusCode
    http: int
    detail: str


EXPECTED: dict[str, Expected] = {
    "validation": Expected(
        ValidationFailed,
        "validation_failed",
        "query",
        grpc.StatusCode.INVALID_ARGUMENT,
        422,
        "query is required for this mode",
    ),
    "not_found": Expected(NotFound, "not_found", None, grpc.StatusCode.NOT_FOUND, 404, "no item 42"),
    "unauthenticated": Expected(
        Unauthenticated, "unauthenticated", None, grpc.StatusCode.UNAUTHENTICATED, 401, "who are you?"
    ),
    "authority": Expected(
        PermissionDenied,
        "authority_too_low",
        "supersedes",
        grpc.StatusCode.PERMISSION_DENIED,
        403,
        "too little authority",
    ),
    "subclass": Expected(
        PermissionDenied,
        "workspace_read_only",
        "workspace_id",
        grpc.StatusCode.PERMISSION_DENIED,
        403,
        "the workspace is read-only",
    ),
    "conflict": Expected(
        Conflict, "name_taken", "name", grpc.StatusCode.FAILED_PRECONDITION, 409, "a tenant named 'acme' exists"
    ),
    "rate": Expected(RateLimited, "rate_limited", None, grpc.StatusCode.RESOURCE_EXHAUSTED, 429, "slow down"),
    "unavailable": Expected(
        Unavailable, "unavailable", None, grpc.StatusCode.UNAVAILABLE, 503, "the embedding endpoint is down"
    ),
    "internal": Expected(EngramError, "broken_invariant", None, grpc.StatusCode.INTERNAL, 500, "an invariant broke"),
    "lost_connection": Expected(
        Unavailable, "unavailable", None, grpc.StatusCode.UNAVAILABLE, 503, "dependency unavailable: connection refused"
    ),
    # PostgreSQL stopping (fast shutdown ends every session) or starting again: 503, retryable, never a 500
    "database_shutdown": Expected(
        Unavailable,
        "unavailable",
        None,
        grpc.StatusCode.UNAVAILABLE,
        503,
        "dependency unavailable: terminating connection due to administrator command",
    ),
    "database_starting": Expected(
        Unavailable,
        "unavailable",
        None,
        grpc.StatusCode.UNAVAILABLE,
        503,
        "dependency unavailable: the database system is starting up",
    ),
    "connection_broken_mid_operation": Expected(
        Unavailable,
        "unavailable",
        None,
        grpc.StatusCode.UNAVAILABLE,
        503,
        "dependency unavailable: cannot switch to state 15; another operation (2) is in progress",
    ),
    "bug": Expected(EngramError, "internal", None, grpc.StatusCode.INTERNAL, 500, "internal error"),
}

CALLER = CallerContext(
    tenant_id=str(uuid.uuid4()),
    principal_id=str(uuid.uuid4()),
    principal_type="user",
    scopes=frozenset({"read"}),
    request_id="req-edge",
)


class Raising(recall_pb2_grpc.RecallServiceServicer):
    """Two plain methods, as every servicer writes them: the caller from ``caller()``, errors simply raised."""

    async def GetItem(
        self, request: recall_pb2.GetItemRequest, context: grpc.aio.ServicerContext
    ) -> recall_pb2.GetItemResponse:
        ctx = caller()
        if request.id == "whoami":
            return recall_pb2.GetItemResponse(
                item={"tenant_id": ctx.tenant_id, "principal_id": ctx.principal_id, "content": ctx.request_id}
            )
        raise RAISED[request.id]

    async def GetStatus(
        self, request: recall_pb2.GetStatusRequest, context: grpc.aio.ServicerContext
    ) -> recall_pb2.GetStatusResponse:
        ctx = caller()
        if request.id == "whoami":
            return recall_pb2.GetStatusResponse(id=ctx.tenant_id)
        raise RAISED[request.id]


class Served:
    """A recall server with the ``Raising`` servicer behind ``start_server``, and the gateway's connection to it."""

    async def start(self, *, serve: bool = True, retry_budget_s: float = 2.0) -> Downstream:
        """``serve=False``: only the gateway's connection; ``serve_now()`` starts the server later."""
        self.settings = Settings(
            recall_addr=f"127.0.0.1:{free_port()}",
            ingest_addr=f"127.0.0.1:{free_port()}",
            internal_token=secrets.token_urlsafe(16),
            gateway_retry_budget_s=retry_budget_s,
        )
        if serve:
            await self.serve_now()
        self.downstream = Downstream.connect(self.settings)
        return self.downstream

    async def serve_now(self) -> None:
        self._server, self._health = await start_server(
            self.settings.recall_addr,
            "edge-test",
            ["engram.v1.RecallService"],
            lambda s: recall_pb2_grpc.add_RecallServiceServicer_to_server(Raising(), s),
            internal_token=self.settings.internal_token,
        )

    async def stop(self) -> None:
        """Close the connection, then stop the server once its calls have finished."""
        await self.downstream.close()
        await stop_server(self._server, self._health, grace_s=1)


@pytest_asyncio.fixture
async def downstream() -> AsyncIterator[Downstream]:
    served = Served()
    yield await served.start()
    await served.stop()


class Gateway:
    """A gateway app with the gateway's problem handlers, whose one route raises the error it is given."""

    def __init__(self) -> None:
        app = FastAPI()
        problems.install(app)
        self._pending: list[EngramError] = []

        @app.get("/raise")
        async def raise_it() -> None:
            raise self._pending.pop()

        self._client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")

    async def answer(self, error: EngramError) -> httpx.Response:
        self._pending.append(error)
        return await self._client.get("/raise")

    async def close(self) -> None:
        await self._client.aclose()


@pytest_asyncio.fixture
async def gateway_app() -> AsyncIterator[Gateway]:
    app = Gateway()
    yield app
    await app.close()


def _count(method: str, code: str) -> float:
    value = REGISTRY.get_sample_value(
        "engram_rpc_duration_seconds_count", {"service": "edge-test", "method": method, "code": code}
    )
    return value or 0.0


@pytest.mark.parametrize("method", ["GetItem", "GetStatus"])
@pytest.mark.parametrize("case", list(RAISED))
async def test_an_error_crosses_grpc_and_the_gateway_unchanged(
    case: str, method: str, downstream: Downstream, gateway_app: Gateway
) -> None:
    expected = EXPECTED[case]
    request = recall_pb2.GetItemRequest(id=case) if method == "GetItem" else recall_pb2.GetStatusRequest(id=case)
    with pytest.raises(EngramError) as caught:
        await downstream.call(getattr(downstream.recall, method), request, CALLER)
    error = caught.value
    assert isinstance(caught.value.__cause__, grpc.aio.AioRpcError)
    assert caught.value.__cause__.code() == expected.status
    assert (type(error), error.code, error.field, error.detail) == (
        expected.cls,
        expected.code,
        expected.field,
        expected.detail,
    )
    if isinstance(error, RateLimited):
        assert error.retry_after_s == 2.5

    answer = await gateway_app.answer(error)
    assert answer.status_code == expected.http
    assert answer.headers["content-type"] == problems.PROBLEM
    body = answer.json()
    assert (body["status"], body["code"], body.get("field")) == (expected.http, expected.code, expected.field)
    if case == "rate":
        assert answer.headers["retry-after"] == "3"


@pytest.mark.parametrize("method", ["GetItem", "GetStatus"])
async def test_the_latency_metric_sees_the_final_status(method: str) -> None:
    served = Served()
    downstream = await served.start()
    before = {status: _count(method, status) for status in ("OK", "NOT_FOUND", "UNAVAILABLE", "INTERNAL")}
    request = recall_pb2.GetItemRequest if method == "GetItem" else recall_pb2.GetStatusRequest
    await downstream.call(getattr(downstream.recall, method), request(id="whoami"), CALLER)
    for case in ("not_found", "lost_connection", "bug"):
        with pytest.raises(EngramError):
            await downstream.call(getattr(downstream.recall, method), request(id=case), CALLER)
    await served.stop()  # every call has finished, its latency recorded
    assert {status: _count(method, status) - before[status] for status in before} == {
        "OK": 1,
        "NOT_FOUND": 1,
        "UNAVAILABLE": 1,
        "INTERNAL": 1,
    }


@pytest.mark.parametrize("method", ["GetItem", "GetStatus"])
async def test_the_method_sees_the_callers_context(method: str, downstream: Downstream) -> None:
    if method == "GetItem":
        reply = await downstream.call(downstream.recall.GetItem, recall_pb2.GetItemRequest(id="whoami"), CALLER)
        assert (reply.item.tenant_id, reply.item.principal_id, reply.item.content) == (
            CALLER.tenant_id,
            CALLER.principal_id,
            "req-edge",
        )
    else:
        reply = await downstream.call(downstream.recall.GetStatus, recall_pb2.GetStatusRequest(id="whoami"), CALLER)
        assert reply.id == CALLER.tenant_id


async def test_a_call_without_caller_context_is_refused_before_the_method(downstream: Downstream) -> None:
    token = downstream.settings.internal_token or ""
    # positive control: with the context the same call reaches the method
    await downstream.recall.GetItem(
        recall_pb2.GetItemRequest(id="whoami"), metadata=to_metadata(CALLER, internal_token=token)
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await downstream.recall.GetItem(
            recall_pb2.GetItemRequest(id="whoami"), metadata=(("x-engram-internal-token", token),)
        )
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    error = from_rpc_error(caught.value)
    assert (type(error), error.code) == (Unauthenticated, "unauthenticated")
    assert "x-engram-tenant-id" in error.detail


async def test_a_call_without_the_internal_token_is_refused_as_unauthenticated(downstream: Downstream) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await downstream.recall.GetItem(recall_pb2.GetItemRequest(id="whoami"), metadata=to_metadata(CALLER))
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    error = from_rpc_error(caught.value)
    assert (type(error), error.code, error.detail) == (
        Unauthenticated,
        "unauthenticated",
        "internal token missing or wrong",
    )


async def _serve_after(served: Served, delay_s: float) -> None:
    await asyncio.sleep(delay_s)
    await served.serve_now()


async def test_a_retried_call_waits_out_a_service_that_is_restarting() -> None:
    served = Served()
    downstream = await served.start(serve=False, retry_budget_s=10.0)
    whoami = recall_pb2.GetItemRequest(id="whoami")
    with pytest.raises(Unavailable):  # control: without the retry, a service not listening is a 503 at once
        await downstream.call(downstream.recall.GetItem, whoami, CALLER)
    starting = asyncio.create_task(_serve_after(served, 0.3))
    reply = await downstream.call(downstream.recall.GetItem, whoami, CALLER, retry_unreachable=True)
    await starting
    assert reply.item.tenant_id == CALLER.tenant_id
    await served.stop()


async def test_an_answer_from_the_service_is_never_retried() -> None:
    """An Unavailable the service itself sent (its database is down) comes back at once, tried exactly once."""
    served = Served()
    downstream = await served.start(retry_budget_s=10.0)
    before = _count("GetItem", "UNAVAILABLE")
    with pytest.raises(Unavailable):
        await downstream.call(
            downstream.recall.GetItem, recall_pb2.GetItemRequest(id="unavailable"), CALLER, retry_unreachable=True
        )
    await served.stop()  # every call has finished, its latency recorded
    assert _count("GetItem", "UNAVAILABLE") - before == 1
