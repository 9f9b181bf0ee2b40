"""The promotion process: durable JetStream consumers of the events that can unblock a proposal, plus the
bounded periodic sweep."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import asyncpg

from engram.config import Settings
from engram.domain.values import EventType
from engram.events.consumer import ConsumerSpec
from engram.events.worker import Subscription, run_worker
from engram.pipeline import promotion
from engram.runtime.periodic import every
from services.promotion.service import TRIGGERS, PromotionService

log = logging.getLogger(__name__)

# How long a pulled batch may wait to fill, by event. An idle durable asks NATS for a batch every window, and the
# promotion process holds four: memory.classified follows every memory, the others follow a person's action (a
# conflict resolved, feedback, a review) and wait up to a second (bench: docs/benchmarks.md, "pipeline CPU").
FETCH_WINDOW_S = {EventType.MEMORY_CLASSIFIED: 0.1}
RARE_EVENT_FETCH_WINDOW_S = 1.0


async def serve(settings: Settings, stop: asyncio.Event) -> None:
    async def build(pool: asyncpg.Pool) -> Sequence[Subscription]:
        service = PromotionService(pool, settings)
        return [
            Subscription(
                ConsumerSpec(
                    name=durable, event=event, fetch_timeout_s=FETCH_WINDOW_S.get(event, RARE_EVENT_FETCH_WINDOW_S)
                ),
                service.handle,
            )
            for durable, event in TRIGGERS
        ]

    async def sweeper(pool: asyncpg.Pool, stop: asyncio.Event) -> None:
        async def one_pass() -> None:
            counts = await promotion.sweep(pool, settings.events_subject_prefix, settings.promotion_sweep_batch)
            if counts:
                log.info("promotion sweep: %s", dict(counts))

        await every(settings.promotion_sweep_interval_s, stop, one_pass, "promotion sweep", log)

    await run_worker("promotion", settings, stop, build, background=sweeper)
