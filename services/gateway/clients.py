"""The gateway's downstream connections: gRPC stubs for ingest (writes and administration) and recall, and
readiness probes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated, Any

import grpc
from fastapi import Depends, Request
from grpc_health.v1 import health_pb2, health_pb2_grpc

from engram.config import Settings
from engram.db.pool import probe
from engram.domain.models import CallerContext
from engram.events import connection
from engram.rpc.context import to_metadata
from engram.rpc.errors import from_rpc_error
from engram.rpc.tracing import client_interceptors
from engram.telemetry.tracing import quiet
from engram.v1 import admin_pb2_grpc, ingest_pb2_grpc, recall_pb2_grpc

RPC_TIMEOUT_S = 10.0
PROBE_TIMEOUT_S = 2.0


@dataclass
class Downstream:
    settings: Settings
    ingest_channel: grpc.aio.Channel
    recall_channel: grpc.aio.Channel
    ingest: ingest_pb2_grpc.IngestServiceStub
    recall: recall_pb2_grpc.RecallServiceStub
    admin: admin_pb2_grpc.AdminStub  # served by the ingest process, on its channel

    @classmethod
    def connect(cls, settings: Settings) -> Downstream:
        interceptors = client_interceptors()
        ingest_channel = grpc.aio.insecure_channel(settings.ingest_addr, interceptors=interceptors)
        recall_channel = grpc.aio.insecure_channel(settings.recall_addr, interceptors=interceptors)
        return cls(
            settings,
            ingest_channel,
            recall_channel,
            ingest_pb2_grpc.IngestServiceStub(ingest_channel),
            recall_pb2_grpc.RecallServiceStub(recall_channel),
            admin_pb2_grpc.AdminStub(ingest_channel),
        )

    async def close(self) -> None:
        await self.ingest_channel.close()
        await self.recall_channel.close()

    async def call(self, method: Any, request: Any, ctx: CallerContext, timeout_s: float = RPC_TIMEOUT_S) -> Any:
        """One unary call with the caller's context in metadata; gRPC errors come back as EngramError."""
        try:
            metadata = to_metadata(ctx, internal_token=self.settings.internal_token)
            return await method(request, metadata=metadata, timeout=timeout_s)
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc) from exc

    async def readiness(self) -> dict[str, str]:
        """Each dependency: "ok" or why not. Probes make no spans (an orchestrator asks every few seconds)."""
        with quiet():
            checks = await asyncio.gather(
                self._probe_database(),
                self._probe_nats(),
                self._probe_grpc(self.ingest_channel, "engram.v1.IngestService"),
                self._probe_grpc(self.recall_channel, "engram.v1.RecallService"),
            )
        return dict(zip(("database", "nats", "ingest", "recall"), checks, strict=True))

    async def _probe_database(self) -> str:
        """The database as the gateway itself uses it: the app role's URL when it was given one, otherwise the
        owner URL acting as the app role (as ``service_pool`` connects)."""
        url, role = self.settings.app_database_url, None
        if not url:
            url, role = self.settings.database_url, self.settings.app_role
        if not url:
            return "not configured"
        try:
            migrated = await probe(url, PROBE_TIMEOUT_S, role)
        except Exception as exc:
            return f"unreachable: {type(exc).__name__}"
        return "ok" if migrated else "not migrated"

    async def _probe_nats(self) -> str:
        if not self.settings.nats_url:
            return "not configured"
        try:
            nc = await connection.connect(
                self.settings, connect_timeout=PROBE_TIMEOUT_S, allow_reconnect=False, max_reconnect_attempts=0
            )
            try:
                await nc.jetstream().stream_info(self.settings.events_stream)
            finally:
                await nc.close()
        except Exception as exc:
            return f"unreachable: {type(exc).__name__}"
        return "ok"

    async def _probe_grpc(self, channel: grpc.aio.Channel, service: str) -> str:
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=PROBE_TIMEOUT_S
            )
        except grpc.aio.AioRpcError as exc:
            return f"unreachable: {exc.code().name}"
        if reply.status != health_pb2.HealthCheckResponse.SERVING:
            return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)).lower()
        return "ok"


def downstream(request: Request) -> Downstream:
    """The app's connections to ingest and recall (made once, at startup)."""
    return request.app.state.downstream  # type: ignore[no-any-return]


Services = Annotated[Downstream, Depends(downstream)]
"""A route parameter typed ``Services`` is the gateway's connection to ingest and recall."""
