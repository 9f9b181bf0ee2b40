"""A consumer's batch in few transactions (``engram.pipeline.batches``): the events of one tenant share one
transaction, an event that fails fails alone, and the outcome is the one each event would have had alone."""

from __future__ import annotations

import json
import uuid
from typing import Any, cast

import asyncpg
import numpy as np

from engram.config import Settings
from engram.db import conflicts, embeddings, inbox, items, kinds
from engram.db.pool import create_pool, tenant_tx
from engram.domain.models import CallerContext
from engram.domain.values import EventType
from engram.embeddings.provider import EmbeddingProvider
from engram.events.envelope import Event
from engram.pipeline.batches import Writes, apply_per_tenant
from services.classifier.service import CONSUMER as CLASSIFIER
from services.classifier.service import ClassifierService
from services.conflicts.service import CONSUMER as CONFLICTS
from services.conflicts.service import ConflictsService
from services.embedder.service import CONSUMER as EMBEDDER
from services.embedder.service import EmbedderService
from services.ingest.service import IngestService, RememberCommand
from services.promotion.service import CONSUMER as PROMOTION
from services.promotion.service import PromotionService
from tests.support.outbox import outbox_events
from tests.support.tenants import create_tenant

TEXTS = (
    "We decided to use PostgreSQL for the billing service.",
    "Clone the repo, run the setup script, then start the dev server.",
    "Carol prefers tea over coffee.",
    "The VPN needs a hardware key.",
)


class CountingPool:
    """A pool that counts the connections taken from it: one per transaction of a consumer."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool
        self.acquired = 0

    def acquire(self) -> Any:
        self.acquired += 1
        return self._pool.acquire()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)


async def _remember(app_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext) -> list[str]:
    ingest = IngestService(app_pool, settings)
    return [str((await ingest.remember(tenant, RememberCommand(content=text))).item.id) for text in TEXTS]


async def _inbox(owner_pool: asyncpg.Pool, consumer: str, events: list[Event]) -> set[str]:
    async with owner_pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT event_id FROM consumer_inbox WHERE consumer = $1 AND event_id = ANY($2::uuid[])",
            consumer,
            [e.id for e in events],
        )
    return {str(r["event_id"]) for r in rows}


async def _queued(owner_pool: asyncpg.Pool, event_type: str, subjects: list[str]) -> list[str]:
    """The subjects of the outbox's ``event_type`` rows about ``subjects``, in the order they were queued."""
    async with owner_pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT envelope->>'subject' AS subject FROM outbox "
            "WHERE envelope->>'type' = $1 AND envelope->>'subject' = ANY($2::text[]) ORDER BY id",
            event_type,
            subjects,
        )
    return [r["subject"] for r in rows]


async def test_the_embedder_reads_a_batch_in_one_transaction_and_stores_it_in_another(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    ids = await _remember(app_pool, settings, tenant)
    created = await outbox_events(owner_pool, types=["memory.created"], subjects=ids)
    assert await EmbedderService(app_pool, settings, embedder).handle(created[:1]) == {}  # handled before
    ghost = Event(
        type=EventType.MEMORY_CREATED.cloud_type, tenant_id=tenant.tenant_id, subject=str(uuid.uuid4()), data={}
    )
    pool = CountingPool(app_pool)
    service = EmbedderService(cast(asyncpg.Pool, pool), settings, embedder)
    assert await service.handle([*created, ghost]) == {}  # the first delivered again, an item that is gone
    assert pool.acquired == 2
    async with owner_pool.acquire() as conn:
        vectors = await conn.fetchval("SELECT count(*) FROM memory_embeddings WHERE item_id = ANY($1::uuid[])", ids)
        announced = await conn.fetchval(
            "SELECT count(*) FROM outbox WHERE tenant_id = $1::uuid AND envelope->>'type' = 'engram.memory.embedded'",
            tenant.tenant_id,
        )
    assert (vectors, announced) == (len(ids), len(ids))
    assert await _inbox(owner_pool, EMBEDDER, [*created, ghost]) == {e.id for e in [*created, ghost]}


async def test_a_batch_is_classified_as_each_event_alone_would_be(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    other = await create_tenant(owner_pool)
    outcomes: list[dict[str, Any]] = []
    for who, one_by_one in ((tenant, True), (other, False)):
        ids = await _remember(app_pool, settings, who)
        created = await outbox_events(owner_pool, types=["memory.created"], subjects=ids)
        assert await EmbedderService(app_pool, settings, embedder).handle(created) == {}
        embedded = await outbox_events(owner_pool, types=["memory.embedded"], subjects=ids)
        pool = CountingPool(app_pool)
        service = ClassifierService(cast(asyncpg.Pool, pool), settings)
        batches = [[e] for e in embedded] if one_by_one else [embedded]
        for batch in batches:
            assert await service.handle(batch) == {}
        assert pool.acquired == 2 * len(batches)  # a read and a write transaction per batch
        async with owner_pool.acquire() as conn:
            rows = await conn.fetch(
                "SELECT i.content, i.kind, r.classifier, r.output, r.applied FROM memory_items i "
                "JOIN classification_receipts r ON r.item_id = i.id WHERE i.id = ANY($1::uuid[]) ORDER BY i.content",
                ids,
            )
        outcomes.append(
            {
                r["content"]: (r["kind"], r["classifier"], json.loads(r["output"]), json.loads(r["applied"]))
                for r in rows
            }
        )
        classified = await outbox_events(owner_pool, types=["memory.classified"], subjects=ids)
        assert len(classified) == len(ids)
    assert len(outcomes[0]) == len(TEXTS) and outcomes[0] == outcomes[1]


async def test_promotion_decides_a_batch_in_one_transaction(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
) -> None:
    ids = await _remember(app_pool, settings, tenant)
    events = [
        Event(type=EventType.MEMORY_CLASSIFIED.cloud_type, tenant_id=tenant.tenant_id, subject=i, data={}) for i in ids
    ]
    pool = CountingPool(app_pool)
    assert await PromotionService(cast(asyncpg.Pool, pool), settings).handle(events) == {}
    assert pool.acquired == 1
    assert await _inbox(owner_pool, PROMOTION, events) == {e.id for e in events}


async def test_an_event_that_fails_in_a_shared_transaction_fails_alone(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, tenant: CallerContext
) -> None:
    events = [Event(type="engram.test.happened", tenant_id=tenant.tenant_id, subject="x", data={}) for _ in range(3)]
    bad = events[1].id

    async def apply(conn: asyncpg.Connection, writes: Writes, event: Event, _: None) -> None:
        if event.id == bad:
            raise RuntimeError("this one cannot be applied")

    pool = CountingPool(app_pool)
    failures = await apply_per_tenant(cast(asyncpg.Pool, pool), "batch-test", [(e, None) for e in events], apply)
    assert list(failures) == [bad] and isinstance(failures[bad], RuntimeError)
    assert pool.acquired == 1 + len(events)  # together, rolled back; then one by one
    assert await _inbox(owner_pool, "batch-test", events) == {events[0].id, events[2].id}


async def test_events_of_two_tenants_in_one_batch_each_commit_in_their_own_tenant(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, tenant: CallerContext
) -> None:
    other = await create_tenant(owner_pool)
    events = [
        Event(type="engram.test.happened", tenant_id=t.tenant_id, subject="x", data={})
        for t in (tenant, other, tenant, other)
    ]
    seen: list[tuple[str, str]] = []

    async def apply(conn: asyncpg.Connection, writes: Writes, event: Event, _: None) -> None:
        seen.append((event.id, await conn.fetchval("SELECT current_setting('app.tenant_id')")))

    pool = CountingPool(app_pool)
    assert await apply_per_tenant(cast(asyncpg.Pool, pool), "batch-test", [(e, None) for e in events], apply) == {}
    assert pool.acquired == 2
    assert sorted(seen) == sorted((e.id, e.tenant_id) for e in events)
    assert await _inbox(owner_pool, "batch-test", events) == {e.id for e in events}


async def test_the_conflicts_consumer_reads_inbox_item_and_vector_in_one_statement(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    [item_id, *_] = await _remember(app_pool, settings, tenant)
    profile = settings.embedding_profile
    event_id = str(uuid.uuid4())
    async with tenant_tx(app_pool, tenant.tenant_id) as conn:
        before = await conflicts.subject(conn, CONFLICTS, event_id, item_id, profile)
        gone = await conflicts.subject(conn, CONFLICTS, event_id, str(uuid.uuid4()), profile)
    assert not before.handled and before.item is not None and str(before.item.id) == item_id
    assert before.vector is None and not gone.handled and gone.item is None and gone.vector is None
    created = await outbox_events(owner_pool, types=["memory.created"], subjects=[item_id])
    assert await EmbedderService(app_pool, settings, embedder).handle(created) == {}
    async with tenant_tx(app_pool, tenant.tenant_id) as conn:
        after = await conflicts.subject(conn, CONFLICTS, event_id, item_id, profile)
        stored = await embeddings.vector(conn, item_id, profile)
        assert after.item == await items.get(conn, item_id)
        await inbox.claim(conn, CONFLICTS, event_id, tenant.tenant_id)
        handled = await conflicts.subject(conn, CONFLICTS, event_id, item_id, profile)
    assert after.vector is not None and stored is not None and np.array_equal(after.vector, stored)
    assert handled.handled


def _named(text: str, content: dict[str, str]) -> str:
    """``text`` with each item id in it replaced by the item's content."""
    for item_id, words in content.items():
        text = text.replace(item_id, words)
    return text


CONFLICTING = (
    "Alice lives in Lisbon.",
    "The deploy script runs every night at 2am.",
    "Alice lives in Porto.",
    "Carol prefers tea over coffee.",
    "Alice lives in Madrid.",
    "The deploy script runs every night at 3am.",
)


async def test_a_batch_of_conflict_checks_ends_as_each_event_alone_would(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    other = await create_tenant(owner_pool)
    outcomes: list[dict[str, Any]] = []
    for who, one_by_one in ((tenant, True), (other, False)):
        ingest = IngestService(app_pool, settings)
        ids = [str((await ingest.remember(who, RememberCommand(content=t))).item.id) for t in CONFLICTING]
        created = await outbox_events(owner_pool, types=["memory.created"], subjects=ids)
        assert await EmbedderService(app_pool, settings, embedder).handle(created) == {}
        embedded = await outbox_events(owner_pool, types=["memory.embedded"], subjects=ids)
        pool = CountingPool(app_pool)
        service = ConflictsService(cast(asyncpg.Pool, pool), settings)
        for batch in [[e] for e in embedded] if one_by_one else [embedded]:
            assert await service.handle(batch) == {}
        async with owner_pool.acquire() as conn:
            content = {
                str(r["id"]): r["content"]
                for r in await conn.fetch("SELECT id, content FROM memory_items WHERE id = ANY($1::uuid[])", ids)
            }

            statuses = await conn.fetch(
                "SELECT content, review_status FROM memory_items WHERE id = ANY($1::uuid[])", ids
            )
            found = await conn.fetch(
                "SELECT item_a, item_b, type, rule FROM conflicts WHERE item_a = ANY($1::uuid[])", ids
            )
            details = await conn.fetch(
                "SELECT item_id, detail FROM item_stages WHERE stage = 'conflict_check' AND item_id = ANY($1::uuid[])",
                ids,
            )
        outcomes.append(
            {
                "statuses": sorted((r["content"], r["review_status"]) for r in statuses),
                "conflicts": sorted(
                    (content[str(r["item_a"])], content[str(r["item_b"])], r["type"], r["rule"]) for r in found
                ),
                "details": sorted((content[str(r["item_id"])], _named(r["detail"], content)) for r in details),
                "transactions": pool.acquired,
            }
        )
    alone, together = outcomes
    assert alone["conflicts"] and len(alone["details"]) == len(CONFLICTING)  # verdicts acted on, every one checked
    assert {k: v for k, v in alone.items() if k != "transactions"} == {
        k: v for k, v in together.items() if k != "transactions"
    }
    assert alone["transactions"] == 2 * len(CONFLICTING) and together["transactions"] < alone["transactions"]
    # together: one transaction reads all six (what a verdict changes is nothing a later event reads), one applies
    # each event with a verdict, one records the events without
    quiet = sum(1 for _, detail in together["details"] if detail.endswith("no conflict"))
    assert 0 < quiet < len(CONFLICTING)
    assert together["transactions"] == 1 + (len(CONFLICTING) - quiet) + 1


async def test_conflict_checks_without_a_verdict_take_two_transactions_a_batch(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    ids = await _remember(app_pool, settings, tenant)
    created = await outbox_events(owner_pool, types=["memory.created"], subjects=ids)
    assert await EmbedderService(app_pool, settings, embedder).handle(created) == {}
    embedded = await outbox_events(owner_pool, types=["memory.embedded"], subjects=ids)
    pool = CountingPool(app_pool)
    service = ConflictsService(cast(asyncpg.Pool, pool), settings)
    assert await service.handle(embedded) == {}
    assert await service.handle(embedded) == {}  # delivered again: nothing to do
    assert pool.acquired == 2 + 1  # reads and records; then the redelivery's reads
    async with owner_pool.acquire() as conn:
        details = await conn.fetch(
            "SELECT detail FROM item_stages WHERE stage = 'conflict_check' AND item_id = ANY($1::uuid[])", ids
        )
        opened = await conn.fetchval("SELECT count(*) FROM conflicts WHERE item_a = ANY($1::uuid[])", ids)
    assert len(details) == len(ids) and opened == 0
    assert all(r["detail"].endswith("no conflict") for r in details)
    assert await _inbox(owner_pool, CONFLICTS, embedded) == {e.id for e in embedded}


async def test_the_tenants_kinds_read_at_once_are_the_kinds_read_one_by_one(
    app_pool: asyncpg.Pool, tenant: CallerContext
) -> None:
    flags = {"singleton": True, "requires_review": False, "stays_in_recall_when_disputed": False}
    await kinds.create(app_pool, tenant.tenant_id, "house_rule", {**flags, "default_importance": 0.7})
    await kinds.switch_built_in(app_pool, tenant.tenant_id, "doctrine", False)
    async with tenant_tx(app_pool, tenant.tenant_id) as conn:
        known = await kinds.effective_kinds(conn)
        one_by_one = {name: await kinds.get_kind(conn, name) for name in known}
        enabled = await kinds.enabled_kind_names(conn)
    assert known == one_by_one and known["house_rule"].singleton and not known["doctrine"].enabled
    assert sorted(name for name, kind in known.items() if kind.enabled) == enabled


async def test_a_batch_writes_its_inbox_stage_receipt_and_outbox_rows_one_statement_a_table(
    migrated: str,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    """The embedder and the classifier each write a batch of four events' inbox rows, stages, receipts and
    memory.* events with one statement a table (one statement per event each before), announced in the
    batch's order."""
    pool = await create_pool(migrated, role=settings.app_role, min_size=1, max_size=1)
    sent: list[str] = []
    try:
        ids = await _remember(pool, settings, tenant)
        created = await outbox_events(owner_pool, types=["memory.created"], subjects=ids)
        async with pool.acquire() as conn:  # the pool's one connection: the logger stays on it
            conn.add_query_logger(lambda record: sent.append(record.query))
        assert await EmbedderService(pool, settings, embedder).handle(created) == {}
        embedding = list(sent)
        embedded = await outbox_events(owner_pool, types=["memory.embedded"], subjects=ids)
        sent.clear()
        assert await ClassifierService(pool, settings).handle(embedded) == {}
        classifying = list(sent)
    finally:
        await pool.close()

    def writes(log: list[str], table: str) -> int:
        return sum(f"INSERT INTO {table} " in q for q in log)

    assert [writes(embedding, t) for t in ("consumer_inbox", "item_stages", "outbox")] == [1, 1, 1]
    assert [writes(classifying, t) for t in ("consumer_inbox", "item_stages", "classification_receipts", "outbox")] == [
        1,
        1,
        1,
        1,
    ]
    assert writes(classifying, "item_events") <= 1
    # announced in the batch's order
    assert await _queued(owner_pool, "engram.memory.embedded", ids) == [e.subject for e in created]
    assert await _queued(owner_pool, "engram.memory.classified", ids) == [e.subject for e in embedded]
    async with owner_pool.acquire() as conn:
        stages = await conn.fetch(
            "SELECT stage, count(*) FILTER (WHERE status = 'done') AS done FROM item_stages "
            "WHERE item_id = ANY($1::uuid[]) AND stage IN ('embedding', 'classification') "
            "GROUP BY stage ORDER BY stage",
            ids,
        )
    assert [(r["stage"], r["done"]) for r in stages] == [("classification", len(ids)), ("embedding", len(ids))]
    assert await _inbox(owner_pool, CLASSIFIER, embedded) == {e.id for e in embedded}


async def test_two_events_of_one_item_in_a_batch_classify_it_once(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    """The first event's stage is still queued when the second is applied: the second sees it done, as it saw
    the stored row when each event wrote its own."""
    [item_id, *_] = await _remember(app_pool, settings, tenant)
    created = await outbox_events(owner_pool, types=["memory.created"], subjects=[item_id])
    assert await EmbedderService(app_pool, settings, embedder).handle(created) == {}
    [first] = await outbox_events(owner_pool, types=["memory.embedded"], subjects=[item_id])
    again = Event(type=first.type, tenant_id=first.tenant_id, subject=first.subject, data=first.data)
    # the same delivery twice, and a second event of the item
    assert await ClassifierService(app_pool, settings).handle([first, first, again]) == {}
    async with owner_pool.acquire() as conn:
        receipts = await conn.fetchval("SELECT count(*) FROM classification_receipts WHERE item_id = $1", item_id)
    assert receipts == 1
    assert len(await outbox_events(owner_pool, types=["memory.classified"], subjects=[item_id])) == 1
    assert await _inbox(owner_pool, CLASSIFIER, [first, again]) == {first.id, again.id}


async def test_an_item_deleted_while_its_batch_was_embedded_is_handled_and_the_others_stored(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    """The vector is stored only when the item still exists (checked and held in the statement that stores it):
    an item deleted between the read and the store gets its inbox row and nothing else, the batch's others their
    vector, stage and event."""
    ids = await _remember(app_pool, settings, tenant)
    created = await outbox_events(owner_pool, types=["memory.created"], subjects=ids)
    gone = ids[1]

    class DeletingFirst:
        profile, dimensions = embedder.profile, embedder.dimensions

        async def embed_passages(self, texts: list[str]) -> list[np.ndarray]:
            async with owner_pool.acquire() as conn:
                await conn.execute("DELETE FROM memory_items WHERE id = $1", uuid.UUID(gone))
            return await embedder.embed_passages(texts)

    service = EmbedderService(app_pool, settings, cast(EmbeddingProvider, DeletingFirst()))
    assert await service.handle(created) == {}
    async with owner_pool.acquire() as conn:
        stored = await conn.fetch("SELECT item_id FROM memory_embeddings WHERE item_id = ANY($1::uuid[])", ids)
    assert {str(r["item_id"]) for r in stored} == set(ids) - {gone}
    assert await _queued(owner_pool, "engram.memory.embedded", ids) == [i for i in ids if i != gone]
    assert await _inbox(owner_pool, EMBEDDER, created) == {e.id for e in created}
