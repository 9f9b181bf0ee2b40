"""What every Engram gRPC server shares: the health service, the interceptors (internal token, latency, the
edge that reads the caller and translates errors), graceful stop."""

from __future__ import annotations

import hmac
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer

from engram.config import GRPC_MAX_MESSAGE_BYTES, SettingsError, is_loopback
from engram.errors import Unauthenticated, ValidationFailed
from engram.rpc.context import INTERNAL_TOKEN, bind_caller
from engram.rpc.errors import abort_with, as_engram_error
from engram.rpc.nul import NO_NUL, REFUSED_CHARACTER, nul_path
from engram.rpc.options import message_limits
from engram.rpc.tracing import server_interceptors
from engram.telemetry.metrics import RPC_LATENCY
from engram.telemetry.tracing import current_traceparent


class MetricsInterceptor(grpc.aio.ServerInterceptor):
    """Records engram_rpc_duration_seconds{service, method, code} for every unary call."""

    def __init__(self, service: str) -> None:
        self._service = service

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler
        method = handler_call_details.method.rsplit("/", 1)[-1]
        inner = handler.unary_unary
        service = self._service

        async def timed(request: Any, context: grpc.aio.ServicerContext) -> Any:
            started = time.perf_counter()
            code = "OK"
            try:
                return await inner(request, context)
            except BaseException:
                code = context.code().name if context.code() else "UNKNOWN"
                raise
            finally:
                RPC_LATENCY.labels(service, method, code).observe(time.perf_counter() - started)

        return grpc.unary_unary_rpc_method_handler(
            timed,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


class InternalTokenInterceptor(grpc.aio.ServerInterceptor):
    """Refuses every call but health checks unless it carries the shared internal token."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        if handler_call_details.method.startswith("/grpc.health.v1.Health/"):
            return await continuation(handler_call_details)
        presented = dict(handler_call_details.invocation_metadata or ()).get(INTERNAL_TOKEN, "")
        if isinstance(presented, str) and hmac.compare_digest(presented.encode(), self._token):
            return await continuation(handler_call_details)

        async def refuse(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await abort_with(context, Unauthenticated("internal token missing or wrong"))

        return grpc.unary_unary_rpc_method_handler(refuse)


class EdgeInterceptor(grpc.aio.ServerInterceptor):
    """The edge of every servicer method but health checks: the caller context is read from the metadata once
    (``caller()`` in ``engram/rpc/context.py``; a call without one is refused ``UNAUTHENTICATED``), and whatever
    the method raises becomes a status: an EngramError its own (``abort_with``), a lost database or network
    connection ``UNAVAILABLE``, anything else a logged ``INTERNAL``. Servicer methods stay plain. Unary methods
    only: Engram serves no streaming one."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or handler.unary_unary is None or method.startswith("/grpc.health.v1.Health/"):
            return handler
        inner = handler.unary_unary

        async def edge(request: Any, context: grpc.aio.ServicerContext) -> Any:
            try:
                with bind_caller(context.invocation_metadata(), current_traceparent()):
                    return await inner(request, context)
            except grpc.aio.AbortError:
                raise  # the call already ended with a status
            except REFUSED_CHARACTER as exc:
                where = nul_path(request)
                refused = ValidationFailed(NO_NUL.format(where=where), field=where) if where else exc
                await abort_with(context, as_engram_error(refused, method))
            except Exception as exc:
                await abort_with(context, as_engram_error(exc, method))

        return grpc.unary_unary_rpc_method_handler(
            edge,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


async def start_server(
    address: str,
    service_label: str,
    service_names: list[str],
    register: Callable[[grpc.aio.Server], None],
    internal_token: str | None = None,
    max_message_bytes: int = GRPC_MAX_MESSAGE_BYTES,
) -> tuple[grpc.aio.Server, HealthServicer]:
    """Bind, register the servicers and the standard health service (SERVING), and start. With
    ``internal_token`` every other call must present it; without one only a loopback ``address`` is bound
    (``SettingsError`` otherwise: anyone who could reach the port could name any tenant and scopes). Messages
    are limited to ``max_message_bytes`` each way. Outermost first: the server span (when tracing is on), the
    token check, the latency metric (so it sees the final status), the edge."""
    if not internal_token and not is_loopback(address):
        raise SettingsError(
            f"{service_label} refuses to serve gRPC on {address} without ENGRAM_INTERNAL_TOKEN", field="internal_token"
        )
    interceptors: list[grpc.aio.ServerInterceptor] = [MetricsInterceptor(service_label), EdgeInterceptor()]
    if internal_token:
        interceptors.insert(0, InternalTokenInterceptor(internal_token))
    interceptors[:0] = server_interceptors()
    # without SO_REUSEPORT (gRPC sets it by default on Linux): a second server on an address in use fails to
    # bind instead of sharing the port and answering half the calls "Method not found"
    options = [*message_limits(max_message_bytes), ("grpc.so_reuseport", 0)]
    server = grpc.aio.server(interceptors=interceptors, options=options)
    register(server)
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError as exc:  # grpc.aio raises where grpc returned 0
        raise OSError(f"cannot bind gRPC server to {address}: {exc}") from exc
    if bound == 0:
        raise OSError(f"cannot bind gRPC server to {address}")
    await server.start()
    for name in ["", *service_names]:
        await health.set(name, health_pb2.HealthCheckResponse.SERVING)
    return server, health


async def stop_server(server: grpc.aio.Server, health: HealthServicer, grace_s: float = 5.0) -> None:
    """Report NOT_SERVING first so balancers drain, then finish in-flight calls."""
    await health.enter_graceful_shutdown()
    await server.stop(grace_s)
