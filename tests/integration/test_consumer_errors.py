"""Errors drive what a JetStream consumer does with a message (real NATS, real PostgreSQL): a failure retrying
cannot help is dead-lettered after one delivery, a retryable one is redelivered, and an event whose item was
deleted before it arrived is acknowledged once by every pipeline consumer, which writes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

import asyncpg
import pytest
from faststream.nats import NatsBroker
from nats.js import JetStreamContext

from engram.config import Settings
from engram.db import embeddings, stages
from engram.db.pool import tenant_tx
from engram.domain.models import CallerContext
from engram.domain.values import EventType
from engram.embeddings.provider import EmbeddingProvider
from engram.errors import NotFound, Unavailable, ValidationFailed
from engram.events.consumer import BatchHandler, ConsumerSpec, register_consumer
from engram.events.envelope import Event, subject_for
from engram.events.stream import deadletter_stream
from services.classifier.service import ClassifierService
from services.conflicts.service import ConflictsService
from services.embedder.service import EmbedderService
from services.ingest.service import IngestService, RememberCommand
from services.ingest.trash import TrashService
from services.promotion.service import PromotionService
from tests.support.outbox import outbox_events
from tests.support.waiting import eventually


async def _publish(js: JetStreamContext, settings: Settings, event: Event) -> None:
    entity_action = EventType.from_cloud_type(event.type)
    assert entity_action is not None
    await js.publish(subject_for(settings.events_subject_prefix, event.tenant_id, entity_action), event.encode())


async def _acked(js: JetStreamContext, settings: Settings, durable: str, count: int = 1) -> bool:
    info = await js.consumer_info(settings.events_stream, durable)
    return info.ack_floor is not None and (info.ack_floor.consumer_seq or 0) >= count


async def _dead(js: JetStreamContext, settings: Settings) -> int:
    return int((await js.stream_info(deadletter_stream(settings))).state.messages)


async def _consuming(settings: Settings, subscriptions: list[tuple[ConsumerSpec, BatchHandler]]) -> NatsBroker:
    broker = NatsBroker(settings.nats_url)
    for spec, handle in subscriptions:
        register_consumer(broker, settings, spec, handle)
    await broker.start()
    return broker


def _failing(error: Callable[[int], Exception | None], calls: list[str]) -> BatchHandler:
    """A handler that fails with ``error(delivery number)`` (None: succeeds), recording each delivery."""

    async def handle(events: list[Event]) -> dict[str, Exception]:
        failures: dict[str, Exception] = {}
        for event in events:
            calls.append(event.id)
            failure = error(calls.count(event.id))
            if failure is not None:
                failures[event.id] = failure
        return failures

    return handle


def _event(tenant: CallerContext, event_type: EventType = EventType.MEMORY_CREATED, **data: object) -> Event:
    subject = str(data.get("item_id", "00000000-0000-4000-8000-00000000dead"))
    return Event(type=event_type.cloud_type, tenant_id=tenant.tenant_id, subject=subject, data=dict(data))


async def test_a_failure_retrying_cannot_help_is_dead_lettered_after_one_delivery(
    settings: Settings, tenant: CallerContext, js: JetStreamContext
) -> None:
    calls: list[str] = []
    spec = ConsumerSpec(name="refuses", event=EventType.MEMORY_CREATED, max_deliver=5)
    broker = await _consuming(settings, [(spec, _failing(lambda _: ValidationFailed("bad", field="x"), calls))])
    try:
        event = _event(tenant)
        await _publish(js, settings, event)
        await eventually(lambda: _dead(js, settings), message="the event dead-lettered")
        info = await js.consumer_info(settings.events_stream, "refuses")
        assert calls == [event.id] and info.delivered.consumer_seq == 1 and info.num_redelivered == 0
        dead = await js.get_last_msg(
            deadletter_stream(settings), f"{settings.events_subject_prefix}-deadletter.refuses"
        )
        assert Event.decode(dead.data).id == event.id
        assert dead.headers and "ValidationFailed" in dead.headers["Engram-Dead-Reason"]
    finally:
        await broker.stop()


async def test_a_retryable_failure_is_redelivered_until_it_succeeds(
    settings: Settings, tenant: CallerContext, js: JetStreamContext
) -> None:
    calls: list[str] = []
    spec = ConsumerSpec(name="flaky", event=EventType.MEMORY_CREATED, max_deliver=5)
    flaky = _failing(lambda delivery: Unavailable("database away") if delivery == 1 else None, calls)
    broker = await _consuming(settings, [(spec, flaky)])
    try:
        event = _event(tenant)
        await _publish(js, settings, event)
        await eventually(lambda: _acked(js, settings, "flaky"), message="the event handled on its redelivery")
        assert calls == [event.id, event.id] and await _dead(js, settings) == 0
    finally:
        await broker.stop()


async def test_not_found_is_acknowledged_once_as_handled(
    settings: Settings, tenant: CallerContext, js: JetStreamContext
) -> None:
    calls: list[str] = []
    spec = ConsumerSpec(name="finds-nothing", event=EventType.MEMORY_CREATED, max_deliver=5)
    broker = await _consuming(settings, [(spec, _failing(lambda _: NotFound("item gone", code="gone"), calls))])
    try:
        event = _event(tenant)
        await _publish(js, settings, event)
        await eventually(lambda: _acked(js, settings, "finds-nothing"), message="the event acknowledged")
        info = await js.consumer_info(settings.events_stream, "finds-nothing")
        assert calls == [event.id] and info.delivered.consumer_seq == 1 and await _dead(js, settings) == 0
    finally:
        await broker.stop()


async def test_writing_to_a_deleted_item_is_not_found_not_a_database_error(
    app_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext, embedder: EmbeddingProvider
) -> None:
    item = (
        await IngestService(app_pool, settings).remember(tenant, RememberCommand(content="Desks are unassigned."))
    ).item
    vector = await embedder.embed_passages([item.content])
    await TrashService(app_pool, settings).delete(tenant, str(item.id), "")
    writes: list[Callable[[asyncpg.Connection], Awaitable[None]]] = [
        lambda conn: embeddings.upsert(conn, tenant.tenant_id, item.id, embedder.profile, vector[0]),
        lambda conn: stages.record(conn, tenant_id=tenant.tenant_id, item_id=item.id, stage="embedding", status="done"),
    ]
    for write in writes:
        with pytest.raises(NotFound) as gone:
            async with tenant_tx(app_pool, tenant.tenant_id) as conn:
                await write(conn)
        assert gone.value.code == "gone" and str(item.id) in gone.value.detail


async def test_every_pipeline_consumer_acks_an_event_of_a_deleted_item_once_and_writes_nothing(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    js: JetStreamContext,
    embedder: EmbeddingProvider,
) -> None:
    item = (
        await IngestService(app_pool, settings).remember(
            tenant, RememberCommand(content="The build cache is cleared every Sunday night.")
        )
    ).item
    [created] = await outbox_events(owner_pool, tenant=tenant, types=["memory.created"])
    await TrashService(app_pool, settings).delete(tenant, str(item.id), "no longer true")
    async with owner_pool.acquire() as conn:
        outbox_before = await conn.fetchval("SELECT count(*) FROM outbox WHERE tenant_id = $1::uuid", tenant.tenant_id)
    item_id = str(item.id)
    events = {
        "embedder": created,
        "classifier": created,
        "conflicts": _event(
            tenant, EventType.MEMORY_EMBEDDED, item_id=item_id, profile=embedder.profile, dimensions=384, kind="fact"
        ),
        "promotion_classified": _event(tenant, EventType.MEMORY_CLASSIFIED, item_id=item_id, kind="fact"),
    }
    subscriptions: list[tuple[ConsumerSpec, BatchHandler]] = [
        (
            ConsumerSpec(name="embedder", event=EventType.MEMORY_CREATED),
            EmbedderService(app_pool, settings, embedder).handle,
        ),
        (ConsumerSpec(name="classifier", event=EventType.MEMORY_CREATED), ClassifierService(app_pool, settings).handle),
        (ConsumerSpec(name="conflicts", event=EventType.MEMORY_EMBEDDED), ConflictsService(app_pool, settings).handle),
        (
            ConsumerSpec(name="promotion_classified", event=EventType.MEMORY_CLASSIFIED),
            PromotionService(app_pool, settings).handle,
        ),
    ]
    broker = await _consuming(settings, subscriptions)
    try:
        for event in {e.id: e for e in events.values()}.values():
            await _publish(js, settings, event)
        for durable in events:
            await eventually(lambda d=durable: _acked(js, settings, d), message=f"{durable} acknowledged the event")
            info = await js.consumer_info(settings.events_stream, durable)
            assert info.delivered.consumer_seq == 1 and info.num_redelivered == 0, durable
    finally:
        await broker.stop()
    assert await _dead(js, settings) == 0
    async with owner_pool.acquire() as conn:
        written = await conn.fetchrow(
            """SELECT (SELECT count(*) FROM memory_items WHERE id = $1::uuid) AS items,
                      (SELECT count(*) FROM memory_embeddings WHERE item_id = $1::uuid) AS vectors,
                      (SELECT count(*) FROM item_stages WHERE item_id = $1::uuid) AS stages,
                      (SELECT count(*) FROM classification_receipts WHERE item_id = $1::uuid) AS receipts,
                      (SELECT count(*) FROM outbox WHERE tenant_id = $2::uuid) - $3 AS new_events""",
            item_id,
            tenant.tenant_id,
            outbox_before,
        )
    assert dict(written) == {"items": 0, "vectors": 0, "stages": 0, "receipts": 0, "new_events": 0}


async def test_a_name_taken_is_a_conflict_from_the_repository(app_pool: asyncpg.Pool) -> None:
    from engram.db import identity
    from engram.errors import Conflict

    name = f"values-{uuid.uuid4().hex[:12]}"
    tenant_id = await identity.create_tenant(app_pool, name)
    with pytest.raises(Conflict) as taken:
        await identity.create_tenant(app_pool, name)
    assert taken.value.code == "name_taken" and taken.value.field == "name"
    await identity.create_workspace(app_pool, tenant_id, "research")
    with pytest.raises(Conflict) as taken:
        await identity.create_workspace(app_pool, tenant_id, "research")
    assert taken.value.code == "name_taken" and taken.value.field == "name"
