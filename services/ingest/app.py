"""The ingest process: one gRPC server for writes (IngestService) and administration (Admin), plus the outbox
relay and the sweeper, wired in one lifespan."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import asyncpg
import grpc

from engram.config import Settings
from engram.db.pool import service_pool
from engram.events import connection
from engram.events.backlog import Backlog
from engram.events.relay import OutboxRelay
from engram.events.stream import ensure_streams
from engram.llm import JsonChat
from engram.rpc.server import start_server, stop_server
from engram.runtime.periodic import every
from engram.telemetry.probes import Probes, ProbeServer
from engram.v1 import admin_pb2_grpc, ingest_pb2_grpc
from services.ingest.admin import AdminService
from services.ingest.admin_servicer import AdminServicer
from services.ingest.conflicts import ConflictService
from services.ingest.edges import EdgeService
from services.ingest.feedback import FeedbackService
from services.ingest.inventory import run_inventory
from services.ingest.observe import ObserveService
from services.ingest.patch import PatchService
from services.ingest.review import ReviewService
from services.ingest.service import IngestService
from services.ingest.servicer import IngestServicer
from services.ingest.trash import TrashService, sweep

log = logging.getLogger(__name__)
RELAY_STOP_TIMEOUT_S = 5.0
SERVICE_NAMES = ["engram.v1.IngestService", "engram.v1.Admin"]


def servicers(
    pool: asyncpg.Pool, settings: Settings, llm: JsonChat | None = None, backlog: Backlog | None = None
) -> Callable[[grpc.aio.Server], None]:
    """What registers the ingest process's servicers on a gRPC server (for ``start_server``); ``backlog``: the
    relay's figure that ``Remember`` checks against ENGRAM_MAX_OUTBOX_BACKLOG."""
    ingest = IngestService(pool, settings, llm, backlog)
    writes = IngestServicer(
        ingest,
        ReviewService(pool, settings),
        FeedbackService(pool, settings),
        TrashService(pool, settings),
        ConflictService(pool, settings, ingest),
        EdgeService(pool, settings),
        ObserveService(pool, settings, ingest),
        PatchService(pool, settings),
    )
    admin = AdminServicer(AdminService(pool, settings))

    def register(server: grpc.aio.Server) -> None:
        ingest_pb2_grpc.add_IngestServiceServicer_to_server(writes, server)
        admin_pb2_grpc.add_AdminServicer_to_server(admin, server)

    return register


async def run_relay(
    settings: Settings, pool: asyncpg.Pool, stop: asyncio.Event, backlog: Backlog | None = None
) -> None:
    """Connect to NATS, declare the streams, relay the outbox; on any failure back off and start over. Each
    round refreshes ``backlog`` (at most every 2 s); ``Backlog.watch`` keeps it current while NATS is away."""
    assert settings.nats_url
    backlog = backlog or Backlog(settings.max_outbox_backlog)
    backoff = 0.2
    while not stop.is_set():
        try:
            nc = await connection.connect(
                settings, max_reconnect_attempts=-1, reconnect_time_wait=0.5, connect_timeout=2
            )
            try:
                js = nc.jetstream()
                await ensure_streams(js, settings)
                backoff = 0.2
                await OutboxRelay(pool, js, settings.events_subject_prefix, backlog=backlog).run(stop)
            finally:
                await nc.close()
        except Exception as exc:
            log.warning("outbox relay interrupted (%r); restarting in %.1fs", exc, backoff)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), backoff)
            backoff = min(backoff * 2, 5.0)


async def run_sweeper(settings: Settings, pool: asyncpg.Pool, stop: asyncio.Event) -> None:
    """Expire items and empty old trash every ``sweep_interval_s``; a failed pass is logged and retried."""

    async def one_pass() -> None:
        await sweep(pool, settings)

    await every(settings.sweep_interval_s, stop, one_pass, "sweep", log)


async def serve(settings: Settings, stop: asyncio.Event) -> None:
    settings.require_for("ingest")
    async with ProbeServer(settings.metrics_port, settings.metrics_host) as probes:
        await _serve(settings, stop, probes)


async def _serve(settings: Settings, stop: asyncio.Event, probes: Probes) -> None:
    pool = await service_pool(settings)
    llm = JsonChat.from_settings(settings)
    backlog = Backlog(settings.max_outbox_backlog)
    try:
        await backlog.refresh(pool)  # a backlog left by the last run counts from the first call
        server, health = await start_server(
            settings.ingest_addr,
            "ingest",
            SERVICE_NAMES,
            servicers(pool, settings, llm, backlog),
            internal_token=settings.internal_token,
            max_message_bytes=settings.grpc_max_message_bytes,
        )
        log.info("ingest serving on %s", settings.ingest_addr)
        relay = asyncio.create_task(run_relay(settings, pool, stop, backlog))
        watcher = asyncio.create_task(backlog.watch(pool, stop))
        sweeper = asyncio.create_task(run_sweeper(settings, pool, stop))
        counter = asyncio.create_task(run_inventory(settings, pool, stop))
        probes.serving()
        try:
            await stop.wait()
        finally:
            probes.serving(False)
            await stop_server(server, health)
            stop.set()
            for task in (sweeper, counter, watcher):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            try:  # the relay finishes its batch; one stuck on an unreachable NATS is cancelled
                await asyncio.wait_for(relay, RELAY_STOP_TIMEOUT_S)
            except TimeoutError:
                log.warning("outbox relay did not stop within %.0fs; cancelled", RELAY_STOP_TIMEOUT_S)
    finally:
        await pool.close()
        if llm is not None:
            await llm.close()
