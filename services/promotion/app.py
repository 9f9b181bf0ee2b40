"""The promotion process: durable JetStream consumers of the events that can unblock a proposal, plus the
bounded periodic sweep."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import asyncpg

from engram.config import Settings
from engram.events.consumer import ConsumerSpec
from engram.events.worker import Subscription, run_worker
from engram.pipeline import promotion
from engram.runtime.periodic import every
from services.promotion.service import TRIGGERS, PromotionService

log = logging.getLogger(__name__)


async def serve(settings: Settings, stop: asyncio.Event) -> None:
    async def build(pool: asyncpg.Pool) -> Sequence[Subscription]:
        service = PromotionService(pool, settings)
        return [Subscription(ConsumerSpec(name=durable, event=event), service.handle) for durable, event in TRIGGERS]

    async def sweeper(pool: asyncpg.Pool, stop: asyncio.Event) -> None:
        async def one_pass() -> None:
            counts = await promotion.sweep(pool, settings.events_subject_prefix, settings.promotion_sweep_batch)
            if counts:
                log.info("promotion sweep: %s", dict(counts))

        await every(settings.promotion_sweep_interval_s, stop, one_pass, "promotion sweep", log)

    await run_worker("promotion", settings, stop, build, background=sweeper)
