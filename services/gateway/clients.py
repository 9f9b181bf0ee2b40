"""The gateway's downstream connections: gRPC stubs for ingest (writes and administration) and recall, and
readiness probes."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from nats.aio.client import Client as NatsClient

from engram.config import Settings
from engram.db.pool import pool_probe
from engram.domain.models import CallerContext
from engram.events import connection
from engram.rpc.context import to_metadata
from engram.rpc.errors import CLASS_KEY, from_rpc_error
from engram.rpc.options import message_limits
from engram.rpc.tracing import client_interceptors
from engram.telemetry.tracing import quiet
from engram.v1 import admin_pb2_grpc, ingest_pb2_grpc, recall_pb2_grpc

RPC_TIMEOUT_S = 10.0
PROBE_TIMEOUT_S = 2.0
RETRY_FIRST_DELAY_S = 0.05
RETRY_MAX_DELAY_S = 0.4
# a restarted service is found again within ~0.1-0.5 s, not after gRPC's default 1 s, 1.6 s, 2.6 s … back-off
CHANNEL_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 500),
]


@dataclass
class Downstream:
    settings: Settings
    ingest_channel: grpc.aio.Channel
    recall_channel: grpc.aio.Channel
    ingest: ingest_pb2_grpc.IngestServiceStub
    recall: recall_pb2_grpc.RecallServiceStub
    admin: admin_pb2_grpc.AdminStub  # served by the ingest process, on its channel
    pool: asyncpg.Pool | None = None  # the gateway's key-lookup pool, which /ready probes the database through
    _nats: NatsClient | None = field(default=None, repr=False)  # one connection for every NATS probe
    _ready: tuple[float, dict[str, str]] | None = field(default=None, repr=False)  # (fresh until, checks)
    _ready_lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    @classmethod
    def connect(cls, settings: Settings, pool: asyncpg.Pool | None = None) -> Downstream:
        interceptors = client_interceptors()
        options = [*CHANNEL_OPTIONS, *message_limits(settings.grpc_max_message_bytes)]
        ingest_channel = grpc.aio.insecure_channel(settings.ingest_addr, options=options, interceptors=interceptors)
        recall_channel = grpc.aio.insecure_channel(settings.recall_addr, options=options, interceptors=interceptors)
        return cls(
            settings,
            ingest_channel,
            recall_channel,
            ingest_pb2_grpc.IngestServiceStub(ingest_channel),
            recall_pb2_grpc.RecallServiceStub(recall_channel),
            admin_pb2_grpc.AdminStub(ingest_channel),
            pool,
        )

    async def close(self) -> None:
        await self.ingest_channel.close()
        await self.recall_channel.close()
        if self._nats is not None:
            await self._nats.close()

    async def call(
        self,
        method: Any,
        request: Any,
        ctx: CallerContext,
        timeout_s: float = RPC_TIMEOUT_S,
        *,
        retry_unreachable: bool = False,
    ) -> Any:
        """One unary call with the caller's context in metadata; gRPC errors come back as EngramError.

        ``retry_unreachable``: for a call that is safe to repeat, try again with back-off for up to
        ``gateway_retry_budget_s`` while the service cannot be reached at all (it is restarting). An answer
        from the service itself, even an Unavailable one, is never retried here."""
        metadata = to_metadata(ctx, internal_token=self.settings.internal_token)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.settings.gateway_retry_budget_s if retry_unreachable else 0.0)
        delay = RETRY_FIRST_DELAY_S
        while True:
            try:
                return await method(request, metadata=metadata, timeout=timeout_s)
            except grpc.aio.AioRpcError as exc:
                if not unreachable(exc) or loop.time() + delay > deadline:
                    raise from_rpc_error(exc) from exc
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX_DELAY_S)

    async def readiness(self) -> dict[str, str]:
        """Each dependency: "ok" or why not, probed at most once every ``readiness_cache_s`` (concurrent
        callers share one probe). Probes make no spans (an orchestrator asks every few seconds)."""
        async with self._ready_lock:
            if self._ready is not None and self._ready[0] > time.monotonic():
                return dict(self._ready[1])
            checks = await self._probe_all()
            self._ready = (time.monotonic() + self.settings.readiness_cache_s, checks)
            return dict(checks)

    async def _probe_all(self) -> dict[str, str]:
        with quiet():
            checks = await asyncio.gather(
                self._probe_database(),
                self._probe_nats(),
                self._probe_grpc(self.ingest_channel, "engram.v1.IngestService"),
                self._probe_grpc(self.recall_channel, "engram.v1.RecallService"),
            )
        return dict(zip(("database", "nats", "ingest", "recall"), checks, strict=True))

    async def _probe_database(self) -> str:
        """The database as the gateway itself uses it: through its pool, as the app role (no new connection)."""
        if self.pool is None:
            return "not configured"
        try:
            migrated = await pool_probe(self.pool, PROBE_TIMEOUT_S)
        except Exception as exc:
            return f"unreachable: {type(exc).__name__}"
        return "ok" if migrated else "not migrated"

    async def _probe_nats(self) -> str:
        if not self.settings.nats_url:
            return "not configured"
        try:
            if self._nats is None or self._nats.is_closed:
                # kept for later probes; it reconnects on its own after NATS comes back. nats-py retries a
                # first connect forever when reconnects are unbounded, so the attempt has its own deadline
                # (connection.connect closes what it opened when cancelled).
                self._nats = await asyncio.wait_for(
                    connection.connect(self.settings, connect_timeout=PROBE_TIMEOUT_S, max_reconnect_attempts=-1),
                    PROBE_TIMEOUT_S,
                )
            if not self._nats.is_connected:
                return "unreachable: disconnected"
            await self._nats.jetstream(timeout=PROBE_TIMEOUT_S).stream_info(self.settings.events_stream)
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


def unreachable(exc: grpc.aio.AioRpcError) -> bool:
    """The call failed because the service could not be reached (refused, reset, restarting), not because the
    service answered: gRPC's UNAVAILABLE without the error class every Engram service sends with its errors."""
    answered = any(key == CLASS_KEY for key, _ in exc.trailing_metadata() or ())
    return exc.code() == grpc.StatusCode.UNAVAILABLE and not answered
