"""The embedder process: durable JetStream consumers of memory.created and memory.restored (an item restored
from the trash before it was ever embedded)."""

from __future__ import annotations

import asyncio
import logging

import nats
from faststream.nats import NatsBroker

from engram.config import Settings
from engram.db.pool import service_pool
from engram.embeddings.provider import create_provider
from engram.events.consumer import ConsumerSpec, register_consumer
from engram.events.stream import ensure_streams
from engram.telemetry.metrics import serve_metrics
from services.embedder.service import CONSUMER, EmbedderService

log = logging.getLogger(__name__)


async def declare_streams(settings: Settings) -> None:
    assert settings.nats_url
    nc = await nats.connect(settings.nats_url, connect_timeout=5)
    try:
        await ensure_streams(nc.jetstream(), settings)
    finally:
        await nc.close()


async def serve(settings: Settings, stop: asyncio.Event) -> None:
    if not settings.database_url or not settings.nats_url:
        raise SystemExit("embedder needs ENGRAM_DATABASE_URL and ENGRAM_NATS_URL")
    serve_metrics(settings.metrics_port, settings.metrics_host)
    provider = create_provider(settings)
    pool = await service_pool(settings)
    broker = NatsBroker(settings.nats_url, max_reconnect_attempts=-1, reconnect_time_wait=1,
                        logger=logging.getLogger("faststream"))
    try:
        await declare_streams(settings)
        service = EmbedderService(pool, settings, provider)
        for durable, event in ((CONSUMER, "memory.created"), (f"{CONSUMER}_restored", "memory.restored")):
            register_consumer(
                broker, settings, ConsumerSpec(name=durable, event=event, batch_size=settings.embedding_batch_size),
                service.handle, on_dead=service.mark_failed,
            )
        await broker.start()
        log.info("embedder consuming memory.created and memory.restored with profile %s", provider.profile)
        await stop.wait()
    finally:
        await broker.stop()
        await pool.close()
        await provider.close()
