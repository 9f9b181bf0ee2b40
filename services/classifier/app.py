"""The classifier process: the durable JetStream consumer ``classifier`` of memory.embedded (it reads the vector the
embedder stored)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import asyncpg

from engram.config import Settings
from engram.embeddings.model_threads import limit_model_threads
from engram.events.consumer import ConsumerSpec
from engram.events.durables import DURABLES
from engram.events.worker import Subscription, run_worker
from engram.llm import JsonChat
from services.classifier.service import ClassifierService


async def serve(settings: Settings, stop: asyncio.Event) -> None:
    limit_model_threads(settings.worker_model_threads)  # before the kind model's e5 loads
    llm = JsonChat.from_settings(settings)

    async def build(pool: asyncpg.Pool) -> Sequence[Subscription]:
        service = ClassifierService(pool, settings, llm)
        return [
            Subscription(ConsumerSpec(name=durable, event=event), service.handle, service.mark_failed)
            for durable, event in DURABLES["classifier"]
        ]

    try:
        await run_worker("classifier", settings, stop, build)
    finally:
        if llm is not None:
            await llm.close()
