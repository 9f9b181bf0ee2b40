"""Outbox relay → JetStream → embedder, against real PostgreSQL, NATS JetStream and the e5 model."""

from __future__ import annotations

import asyncio
import json

import asyncpg
import nats
import pytest
from faststream.nats import NatsBroker
from nats.errors import ConnectionClosedError
from nats.js import JetStreamContext

from engram.config import Settings
from engram.domain.models import CallerContext
from engram.embeddings.provider import EmbeddingProvider
from engram.events.consumer import ConsumerSpec, patch_nats_fetch_timeout, register_consumer
from engram.events.envelope import Event
from engram.events.relay import OutboxRelay
from engram.events.stream import deadletter_stream
from services.classifier.service import ClassifierService
from services.embedder.service import CONSUMER, EmbedderService
from services.ingest.service import IngestService, RememberCommand
from tests.support.outbox import outbox_events
from tests.support.waiting import eventually


async def test_relay_publishes_cloudevents_once(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext, js: JetStreamContext
) -> None:
    result = await IngestService(app_pool, settings).remember(
        tenant, RememberCommand(content="The release train leaves every Tuesday.", kind="decision")
    )
    relay = OutboxRelay(app_pool, js, settings.events_subject_prefix)
    assert await relay.publish_pending() >= 1
    sub = await js.pull_subscribe(f"{settings.events_subject_prefix}.>", stream=settings.events_stream)
    [msg] = await sub.fetch(1, timeout=5)
    envelope = json.loads(msg.data)
    assert msg.subject == f"{settings.events_subject_prefix}.{tenant.tenant_id}.memory.created"
    assert msg.headers and msg.headers["Nats-Msg-Id"] == envelope["id"]
    assert envelope["specversion"] == "1.0" and envelope["type"] == "engram.memory.created"
    assert envelope["tenantid"] == tenant.tenant_id and envelope["subject"] == str(result.item.id)
    assert envelope["data"]["kind"] == "decision" and envelope["data"]["item_id"] == str(result.item.id)
    assert "Tuesday" not in msg.data.decode()
    # a relay that crashed after publishing but before marking: the re-publish is de-duplicated by JetStream
    async with owner_pool.acquire() as conn:
        await conn.execute("UPDATE outbox SET sent_at = NULL WHERE event_id = $1::uuid", envelope["id"])
    assert await relay.publish_pending() == 1
    info = await js.stream_info(settings.events_stream)
    assert info.state.messages == 1


async def test_a_failed_publish_leaves_the_batch_unsent_and_a_later_one_marks_it_once(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext, js: JetStreamContext
) -> None:
    """The relay claims and marks a batch in one statement before publishing: the mark must not outlive a
    publish that failed."""
    result = await IngestService(app_pool, settings).remember(
        tenant, RememberCommand(content="The staging database is rebuilt every Sunday night.")
    )

    async def row() -> asyncpg.Record:
        async with owner_pool.acquire() as conn:
            found = await conn.fetchrow(
                "SELECT sent_at, attempts FROM outbox WHERE envelope->>'subject' = $1", str(result.item.id)
            )
        assert found is not None
        return found

    closed = await nats.connect(settings.nats_url)
    await closed.close()
    with pytest.raises(ConnectionClosedError):
        await OutboxRelay(app_pool, closed.jetstream(), settings.events_subject_prefix).publish_pending()
    unsent = await row()
    assert unsent["sent_at"] is None and unsent["attempts"] == 0
    assert await OutboxRelay(app_pool, js, settings.events_subject_prefix).publish_pending() >= 1
    sent = await row()
    assert sent["sent_at"] is not None and sent["attempts"] == 1


async def test_embedder_redelivery_changes_nothing(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    result = await IngestService(app_pool, settings).remember(tenant, RememberCommand(content="Bob moved to Lisbon."))
    [event] = await outbox_events(owner_pool, tenant=tenant)
    service = EmbedderService(app_pool, settings, embedder)
    assert await service.handle([event]) == {}
    assert await service.handle([event]) == {}  # the redelivery
    async with owner_pool.acquire() as conn:
        counts = await conn.fetchrow(
            """SELECT (SELECT count(*) FROM memory_embeddings WHERE item_id = $1) AS vectors,
                      (SELECT count(*) FROM consumer_inbox WHERE event_id = $2::uuid AND consumer = $3) AS inbox,
                      (SELECT count(*) FROM outbox WHERE tenant_id = $4::uuid
                          AND envelope->>'type' = 'engram.memory.embedded') AS embedded_events,
                      (SELECT status FROM item_stages WHERE item_id = $1 AND stage = 'embedding') AS stage""",
            result.item.id,
            event.id,
            CONSUMER,
            tenant.tenant_id,
        )
    assert dict(counts) == {"vectors": 1, "inbox": 1, "embedded_events": 1, "stage": "done"}


async def test_write_flows_through_jetstream_to_the_embedder(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    js: JetStreamContext,
    embedder: EmbeddingProvider,
) -> None:
    service = EmbedderService(app_pool, settings, embedder)
    broker = NatsBroker(settings.nats_url)
    register_consumer(
        broker,
        settings,
        ConsumerSpec(name="embedder-under-test", event="memory.created", max_deliver=2),
        service.handle,
        service.mark_failed,
    )
    stop = asyncio.Event()
    relay = OutboxRelay(app_pool, js, settings.events_subject_prefix, poll_interval_s=0.2)
    relay_task = asyncio.create_task(relay.run(stop))
    await broker.start()
    try:
        # a poison message first: it must go to the dead letter without blocking the good ones
        await js.publish(f"{settings.events_subject_prefix}.{tenant.tenant_id}.memory.created", b"not json")
        ingest = IngestService(app_pool, settings)
        ids = [
            (await ingest.remember(tenant, RememberCommand(content=text))).item.id
            for text in ("Carol runs the Berlin office.", "The VPN needs a hardware key.")
        ]

        async def all_embedded() -> bool:
            async with owner_pool.acquire() as conn:
                return bool(
                    await conn.fetchval(
                        "SELECT count(*) = $2 FROM memory_embeddings WHERE item_id = ANY($1)", ids, len(ids)
                    )
                )

        await eventually(all_embedded, message="both items embedded")
        dead = await js.stream_info(deadletter_stream(settings))
        assert dead.state.messages == 1
    finally:
        stop.set()
        await relay_task
        await broker.stop()


async def test_fetch_timeouts_reach_faststream_as_nats_timeouts(
    settings: Settings, js: JetStreamContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nats-py can raise the builtin TimeoutError from fetch; faststream only survives nats' own subclass."""
    from nats.errors import TimeoutError as NatsTimeoutError
    from nats.js.client import JetStreamContext as Context

    patch_nats_fetch_timeout()
    sub = await js.pull_subscribe(
        f"{settings.events_subject_prefix}.>", durable="timeouts", stream=settings.events_stream
    )

    async def deadline_ran_out(*_: object, **__: object) -> list[object]:
        raise TimeoutError  # what nats-py 2.16 raises when the deadline ran out between its requests

    monkeypatch.setattr(Context.PullSubscription, "_fetch_n", deadline_ran_out)
    with pytest.raises(NatsTimeoutError):
        await sub.fetch(5, timeout=1)


async def test_a_message_that_always_fails_is_dead_lettered_and_the_consumer_keeps_going(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext, js: JetStreamContext
) -> None:
    """A well-formed event whose effect fails every time (it names no valid item) is retried max_deliver
    times, then goes to the dead letter with its reason; good events before and after still take effect."""
    service = ClassifierService(app_pool, settings)
    broker = NatsBroker(settings.nats_url)
    register_consumer(
        broker,
        settings,
        ConsumerSpec(name="classifier-under-test", event="memory.created", max_deliver=2, batch_size=4),
        service.handle,
        service.mark_failed,
    )
    stop = asyncio.Event()
    relay_task = asyncio.create_task(
        OutboxRelay(app_pool, js, settings.events_subject_prefix, poll_interval_s=0.2).run(stop)
    )
    await broker.start()
    try:
        ingest = IngestService(app_pool, settings)
        first = (await ingest.remember(tenant, RememberCommand(content="We decided to pin numpy."))).item.id
        poison = Event(
            type="engram.memory.created",
            tenant_id=tenant.tenant_id,
            subject="not-an-item-id",
            data={"item_id": "not-an-item-id"},
        )
        await js.publish(f"{settings.events_subject_prefix}.{tenant.tenant_id}.memory.created", poison.encode())
        last = (await ingest.remember(tenant, RememberCommand(content="I prefer short standups."))).item.id

        async def both_classified() -> bool:
            async with owner_pool.acquire() as conn:
                return bool(
                    await conn.fetchval(
                        "SELECT count(DISTINCT item_id) = 2 FROM classification_receipts WHERE item_id = ANY($1)",
                        [first, last],
                    )
                )

        await eventually(both_classified, message="the good events classified")

        async def dead_lettered() -> bool:
            return bool((await js.stream_info(deadletter_stream(settings))).state.messages == 1)

        await eventually(dead_lettered, timeout=30, message="the poison event dead-lettered")
        dead = await js.get_last_msg(
            deadletter_stream(settings), f"{settings.events_subject_prefix}-deadletter.classifier-under-test"
        )
        assert dead.headers and "Engram-Dead-Reason" in dead.headers
        assert Event.decode(dead.data).id == poison.id
    finally:
        stop.set()
        await relay_task
        await broker.stop()


async def test_two_replicas_of_a_consumer_share_the_work_and_each_event_takes_effect_once(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext, js: JetStreamContext
) -> None:
    handled: dict[str, int] = {"a": 0, "b": 0}
    brokers = []
    for name in handled:
        service = ClassifierService(app_pool, settings)

        async def handle(events: list[Event], service: ClassifierService = service, name: str = name) -> dict:  # type: ignore[type-arg]
            handled[name] += len(events)
            await asyncio.sleep(0.02)  # long enough that the other replica's pull gets the next message
            return await service.handle(events)

        broker = NatsBroker(settings.nats_url)
        register_consumer(
            broker, settings, ConsumerSpec(name="classifier-replicated", event="memory.created", batch_size=1), handle
        )
        brokers.append(broker)
    stop = asyncio.Event()
    relay_task = asyncio.create_task(
        OutboxRelay(app_pool, js, settings.events_subject_prefix, poll_interval_s=0.2).run(stop)
    )
    for broker in brokers:
        await broker.start()
    try:
        ingest = IngestService(app_pool, settings)
        ids = [
            (await ingest.remember(tenant, RememberCommand(content=f"We decided to keep log {n}."))).item.id
            for n in range(30)
        ]

        async def all_classified() -> bool:
            async with owner_pool.acquire() as conn:
                return bool(
                    await conn.fetchval(
                        "SELECT count(*) = 30 FROM classification_receipts WHERE item_id = ANY($1)", ids
                    )
                )

        await eventually(all_classified, timeout=30, message="all 30 items classified")
        async with owner_pool.acquire() as conn:
            receipts = await conn.fetchval("SELECT count(*) FROM classification_receipts WHERE item_id = ANY($1)", ids)
        assert receipts == 30 and handled["a"] > 0 and handled["b"] > 0
        assert handled["a"] + handled["b"] >= 30
    finally:
        stop.set()
        await relay_task
        for broker in brokers:
            await broker.stop()
