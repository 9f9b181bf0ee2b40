"""gRPC spans (the OpenTelemetry gRPC instrumentation) for Engram's channels and servers, when tracing is on.

Client and server spans follow the RPC semantic conventions (``rpc.system``, ``rpc.service``, ``rpc.method``,
``rpc.grpc.status_code``); the trace context travels in the call's metadata. Health checks make no spans.
"""

from __future__ import annotations

from typing import Any

import grpc

from engram.telemetry.tracing import enabled

HEALTH = "grpc.health.v1.Health"


def client_interceptors() -> list[grpc.aio.ClientInterceptor]:
    """Interceptors for a channel to ingest or recall: a client span per call (none when tracing is off)."""
    if not enabled():
        return []
    from opentelemetry.instrumentation.grpc import aio_client_interceptors, filters

    interceptors: list[grpc.aio.ClientInterceptor] = aio_client_interceptors(  # type: ignore[no-untyped-call]
        filter_=filters.negate(filters.service_name(HEALTH))
    )
    return interceptors


def server_interceptors() -> list[Any]:
    """The server-span interceptor (outermost, so every other interceptor runs inside the span), or none."""
    if not enabled():
        return []
    from opentelemetry.instrumentation.grpc import aio_server_interceptor, filters

    health_calls = filters.negate(filters.service_name(HEALTH))
    return [aio_server_interceptor(filter_=health_calls)]  # type: ignore[no-untyped-call]
