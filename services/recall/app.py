"""The recall process: a gRPC server for reads, embedding queries in-process with the shared provider (behind
the query cache and micro-batcher of engram.embeddings.queries)."""

from __future__ import annotations

import asyncio
import logging

from engram.config import Settings
from engram.db.pool import service_pool
from engram.embeddings.queries import create_query_embedder
from engram.rpc.server import start_server, stop_server
from engram.telemetry.probes import Probes, ProbeServer
from engram.v1 import recall_pb2_grpc
from services.recall.service import RecallService
from services.recall.servicer import RecallServicer
from services.recall.telemetry import RecallTelemetry

log = logging.getLogger(__name__)


async def serve(settings: Settings, stop: asyncio.Event) -> None:
    settings.require_for("recall")
    async with ProbeServer(settings.metrics_port, settings.metrics_host) as probes:
        await _serve(settings, stop, probes)


async def _serve(settings: Settings, stop: asyncio.Event, probes: Probes) -> None:
    embedder = create_query_embedder(settings)
    pool = await service_pool(settings)
    try:
        telemetry = RecallTelemetry(pool)
        writer_stop = asyncio.Event()  # set after the server has drained, so the last recalls are logged too
        writer = asyncio.create_task(telemetry.run(writer_stop))
        service = RecallService(pool, settings, embedder, telemetry)
        server, health = await start_server(
            settings.recall_addr,
            "recall",
            ["engram.v1.RecallService"],
            lambda s: recall_pb2_grpc.add_RecallServiceServicer_to_server(RecallServicer(service), s),
            internal_token=settings.internal_token,
            max_message_bytes=settings.grpc_max_message_bytes,
        )
        log.info("recall serving on %s", settings.recall_addr)
        probes.serving()
        try:
            await stop.wait()
        finally:
            probes.serving(False)
            await stop_server(server, health)
            writer_stop.set()
            await writer  # the last entries are written before the pool closes
    finally:
        await pool.close()
        await embedder.close()
