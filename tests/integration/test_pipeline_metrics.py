"""The pipeline's health metrics move with what happens (real NATS, real PostgreSQL): the relay's outbox gauges
rise while NATS refuses publishes and fall back once it accepts them, and a dead-lettered event counts in
``engram_consumer_dead_letters_total{consumer}``."""

from __future__ import annotations

import asyncio

import asyncpg
from faststream.nats import NatsBroker
from nats.js import JetStreamContext
from prometheus_client import REGISTRY

from engram.config import Settings
from engram.domain.models import CallerContext
from engram.domain.values import EventType
from engram.errors import ValidationFailed
from engram.events.consumer import ConsumerSpec, register_consumer
from engram.events.envelope import Event, subject_for
from engram.events.relay import OutboxRelay
from engram.events.stream import deadletter_stream, ensure_streams
from services.ingest.service import IngestService, RememberCommand
from tests.support.waiting import eventually


def sample(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


async def test_the_outbox_gauges_follow_an_outage_and_the_recovery(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext, js: JetStreamContext
) -> None:
    prefix = settings.events_subject_prefix
    async with owner_pool.acquire() as conn:  # rows other tests left unsent are theirs, not this relay's
        await conn.execute(
            "UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL AND NOT starts_with(subject, $1)", prefix + "."
        )
    await IngestService(app_pool, settings).remember(tenant, RememberCommand(content="The canteen opens at noon."))
    async with owner_pool.acquire() as conn:
        await conn.execute(
            "UPDATE outbox SET created_at = now() - interval '10 minutes' WHERE starts_with(subject, $1)", prefix + "."
        )
    await js.delete_stream(settings.events_stream)  # JetStream refuses every publish: the rows wait
    stop = asyncio.Event()
    relay_task = asyncio.create_task(OutboxRelay(app_pool, js, prefix, poll_interval_s=0.2).run(stop))
    try:
        await eventually(
            lambda: _true(sample("engram_outbox_backlog") >= 1 and sample("engram_outbox_oldest_age_seconds") >= 600),
            message="the gauges show the waiting row and its age",
        )
        assert sample("engram_outbox_publish_failures_total") >= 1
        await ensure_streams(js, settings)
        await eventually(
            lambda: _true(sample("engram_outbox_backlog") == 0 and sample("engram_outbox_oldest_age_seconds") == 0),
            timeout=30.0,
            message="the gauges back at zero once the row is published",
        )
        assert (await js.stream_info(settings.events_stream)).state.messages >= 1
    finally:
        stop.set()
        await relay_task


async def _true(value: bool) -> bool:
    return value


async def test_a_dead_lettered_event_is_counted_for_its_consumer(
    settings: Settings, tenant: CallerContext, js: JetStreamContext
) -> None:
    labels = {"consumer": "refuses-counted"}
    before = sample("engram_consumer_dead_letters_total", labels)

    async def refuse(events: list[Event]) -> dict[str, Exception]:
        return {event.id: ValidationFailed("bad", field="x") for event in events}

    broker = NatsBroker(settings.nats_url)
    register_consumer(broker, settings, ConsumerSpec(name="refuses-counted", event=EventType.MEMORY_CREATED), refuse)
    await broker.start()
    try:
        event = Event(
            type=EventType.MEMORY_CREATED.cloud_type,
            tenant_id=tenant.tenant_id,
            subject="00000000-0000-4000-8000-00000000dead",
            data={},
        )
        entity_action = EventType.from_cloud_type(event.type)
        assert entity_action is not None
        await js.publish(subject_for(settings.events_subject_prefix, tenant.tenant_id, entity_action), event.encode())
        await eventually(
            lambda: _true(sample("engram_consumer_dead_letters_total", labels) == before + 1),
            message="the dead letter counted",
        )
        assert (await js.stream_info(deadletter_stream(settings))).state.messages == 1
    finally:
        await broker.stop()
