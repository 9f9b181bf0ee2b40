"""An upgrade that moves a durable consumer to a later event of the pipeline: the classifier's durable, which
took memory.created before 2026-12-02, takes memory.embedded once its service starts (``retarget``), and no item
created before the upgrade is left unclassified. Against real PostgreSQL, NATS JetStream and the e5 model."""

from __future__ import annotations

import json

import asyncpg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig

from engram import doctor
from engram.config import Settings
from engram.domain.models import CallerContext
from engram.domain.values import EventType
from engram.embeddings.provider import EmbeddingProvider
from engram.events.consumer import ConsumerSpec, retarget
from engram.events.envelope import Event, filter_for
from engram.events.relay import OutboxRelay
from services.classifier.service import ClassifierService
from services.embedder.service import EmbedderService
from services.ingest.service import IngestService, RememberCommand
from tests.support.outbox import outbox_events

DURABLE = "classifier"


async def _receipts(owner_pool: asyncpg.Pool, item_id: str) -> int:
    async with owner_pool.acquire() as conn:
        return int(await conn.fetchval("SELECT count(*) FROM classification_receipts WHERE item_id = $1", item_id))


async def test_the_old_classifier_durable_moves_to_memory_embedded_and_leaves_no_item_behind(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    js: JetStreamContext,
    embedder: EmbeddingProvider,
) -> None:
    stream, prefix = settings.events_stream, settings.events_subject_prefix
    old = ConsumerConfig(
        durable_name=DURABLE,
        filter_subject=filter_for(prefix, EventType.MEMORY_CREATED),
        ack_policy=AckPolicy.EXPLICIT,
        max_deliver=6,
        ack_wait=30,
    )
    await js.add_consumer(stream, old)  # as a deployment before the upgrade left it
    ingest, relay = IngestService(app_pool, settings), OutboxRelay(app_pool, js, prefix)
    embed = EmbedderService(app_pool, settings, embedder)
    classifier = ClassifierService(app_pool, settings)
    done, waiting, late = [
        str((await ingest.remember(tenant, RememberCommand(content=text))).item.id)
        for text in (
            "Clone the repo, run the setup script, then start the dev server.",
            "Card numbers are never written to logs.",
            "Honestly I'd go for the quieter hotel even if it's further out.",
        )
    ]
    assert await relay.publish_pending() == 3
    # the old classifier handled the first item's memory.created and acknowledged it, not the second's
    pulled = await js.pull_subscribe(old.filter_subject or "", durable=DURABLE, stream=stream)
    first, second = await pulled.fetch(2, timeout=5)
    assert await classifier.handle([Event.decode(first.data)]) == {}
    await first.ack()
    await pulled.unsubscribe()
    # then the embedder embedded all three; the third was embedded after the upgrade
    assert await embed.handle(await outbox_events(owner_pool, types=["memory.created"], subjects=[done, waiting])) == {}
    assert await relay.publish_pending() == 3  # and the first item's memory.classified
    before = await doctor.run(settings, doctor.Targets(None, settings.nats_url))
    stale = next(c for c in before if c.name == f"consumer {DURABLE}")
    assert not stale.ok and "expected" in stale.detail and "memory.embedded" in stale.detail

    spec = ConsumerSpec(name=DURABLE, event=EventType.MEMORY_EMBEDDED)
    assert await retarget(js, settings, spec)
    assert not await retarget(js, settings, spec)  # a second replica starting finds it moved
    info = await js.consumer_info(stream, DURABLE)
    assert info.config.filter_subject == filter_for(prefix, EventType.MEMORY_EMBEDDED)
    assert (info.config.max_deliver, info.config.ack_wait) == (6, 30)  # the rest of its settings kept
    after = await doctor.run(settings, doctor.Targets(None, settings.nats_url))
    assert next(c for c in after if c.name == f"consumer {DURABLE}").ok

    assert await embed.handle(await outbox_events(owner_pool, types=["memory.created"], subjects=[late])) == {}
    assert await relay.publish_pending() == 1
    moved = await js.pull_subscribe(info.config.filter_subject or "", durable=DURABLE, stream=stream)
    messages = await moved.fetch(3, timeout=5)
    events = [Event.decode(m.data) for m in messages]
    assert {e.type for e in events} == {EventType.MEMORY_EMBEDDED.cloud_type}
    assert [e.subject for e in events] == [done, waiting, late]  # from the old floor on
    assert await classifier.handle(events) == {}
    for message in messages:
        await message.ack()
    assert [await _receipts(owner_pool, i) for i in (done, waiting, late)] == [1, 1, 1]  # the first not twice
    classified = await outbox_events(owner_pool, tenant=tenant, types=["memory.classified"])
    assert sorted(e.subject for e in classified) == sorted([done, waiting, late])
    assert json.loads(second.data)["subject"] == waiting  # the event the old durable never acknowledged
