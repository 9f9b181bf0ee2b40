"""The embedder process: durable JetStream consumers of memory.created and memory.restored (an item restored
from the trash before it was ever embedded; and the items whose predecessor it is again are embedded again), and
of memory.deleted, memory.expired and memory.updated (the items embedded with such a memory as their predecessor
are embedded again)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import asyncpg

from engram.config import Settings
from engram.domain.values import EventType
from engram.embeddings.model_threads import limit_model_threads
from engram.embeddings.provider import create_provider
from engram.events.consumer import ConsumerSpec
from engram.events.durables import DURABLES
from engram.events.worker import Subscription, run_worker
from services.embedder.service import EmbedderService


async def serve(settings: Settings, stop: asyncio.Event) -> None:
    settings.require_for("embedder")
    limit_model_threads(settings.worker_model_threads)  # before the model loads
    provider = create_provider(settings)

    async def build(pool: asyncpg.Pool) -> Sequence[Subscription]:
        service = EmbedderService(pool, settings, provider)
        return [
            Subscription(
                ConsumerSpec(name=durable, event=event, batch_size=settings.embedding_batch_size),
                *(
                    (service.handle, service.mark_failed)
                    if event in (EventType.MEMORY_CREATED, EventType.MEMORY_RESTORED)
                    else (service.recheck, service.recheck_failed)
                ),
            )
            for durable, event in DURABLES["embedder"]
        ]

    try:
        await run_worker("embedder", settings, stop, build)
    finally:
        await provider.close()
