"""Embedding logic: read the items a batch of memory.created (or memory.restored) events names (one transaction per
tenant), embed those still without a vector in one call, and store each vector with its inbox row, stage and
memory.embedded event; the stores of one tenant share a transaction, replayed one event per transaction if it
fails (``engram.pipeline.batches``).

An item deleted (moved to the trash) before its vector is stored is an expected outcome, not a failure: the
event is recorded as handled in the inbox, nothing is stored, and it is acknowledged. A restore announces
``memory.restored``, which embeds the item again if its vector did not come back with it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

import asyncpg
import numpy as np

from engram.config import Settings
from engram.db import embeddings, inbox, items
from engram.db.pool import tenant_tx
from engram.domain.content import passage
from engram.domain.models import MemoryItem
from engram.domain.values import EventType, PipelineStage, StageStatus
from engram.embeddings.provider import EmbeddingProvider
from engram.events.envelope import Event
from engram.events.outbox import Outbox
from engram.pipeline import changes
from engram.pipeline.batches import Writes, apply_per_tenant, by_tenant
from engram.telemetry.metrics import EMBED_BATCH, EMBED_LATENCY, SEARCHABLE_LAG

log = logging.getLogger(__name__)

CONSUMER = "embedder"


class EmbedderService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings, provider: EmbeddingProvider) -> None:
        self._pool = pool
        self._settings = settings
        self._provider = provider
        self._outbox = Outbox(settings.events_subject_prefix)

    async def handle(self, events: list[Event]) -> dict[str, Exception]:
        """Embed the items of a batch; return the events that failed (they will be redelivered)."""
        failures: dict[str, Exception] = {}
        todo: list[tuple[Event, MemoryItem]] = []
        for tenant_id, group in by_tenant([(event, None) for event in events]).items():
            try:
                todo += await self._load_all(tenant_id, [event for event, _ in group])
                continue
            except Exception as exc:  # find out which, one by one
                log.info("reading a batch of %d events failed (%r); reading them one by one", len(group), exc)
            for event, _ in group:
                try:
                    item = await self._load(event)
                except Exception as exc:
                    failures[event.id] = exc
                    continue
                if item is not None:
                    todo.append((event, item))
        if not todo:
            return failures
        started = time.perf_counter()
        try:
            vectors = await self._provider.embed_passages([passage(item.content, item.valid_from) for _, item in todo])
        except Exception as exc:
            return failures | {event.id: exc for event, _ in todo}
        EMBED_LATENCY.labels(self._provider.profile).observe(time.perf_counter() - started)
        EMBED_BATCH.observe(len(todo))
        stored = [(event, (item, vector)) for (event, item), vector in zip(todo, vectors, strict=True)]
        return failures | await apply_per_tenant(self._pool, CONSUMER, stored, self._store)

    async def _load_all(self, tenant_id: str, events: list[Event]) -> list[tuple[Event, MemoryItem]]:
        """``_load`` for the events of one tenant, in one transaction and three reads."""
        todo: list[tuple[Event, MemoryItem]] = []
        async with tenant_tx(self._pool, tenant_id) as conn:
            handled = await inbox.seen_among(conn, CONSUMER, [event.id for event in events])
            fresh = [event for event in events if event.id not in handled]
            if not fresh:
                return todo
            found = {str(item.id): item for item in await items.get_many(conn, [event.subject for event in fresh])}
            embedded = await embeddings.having(conn, list(found), self._provider.profile)
            for event in fresh:
                item = found.get(event.subject)
                if item is None:
                    await self._gone(conn, event)
                elif event.subject not in embedded:  # else a restored item that came back with its vector
                    todo.append((event, item))
        return todo

    async def _load(self, event: Event) -> MemoryItem | None:
        """The item to embed, or None when there is nothing to do (already processed, item gone, or a restored
        item that came back with its vector)."""
        async with tenant_tx(self._pool, event.tenant_id) as conn:
            if await inbox.seen(conn, CONSUMER, event.id):
                return None
            item = await items.get(conn, event.subject)
            if item is None:
                await self._gone(conn, event)
                return None
            if await embeddings.exists(conn, str(item.id), self._provider.profile):
                return None  # a restored item came back with its vector
            return item

    async def _store(
        self, conn: asyncpg.Connection, writes: Writes, event: Event, embedded: tuple[MemoryItem, np.ndarray]
    ) -> Callable[[], None] | None:
        """Store one vector in the caller's transaction (its inbox row recorded, its stage and event queued); what
        to observe once it has committed."""
        item, vector = embedded
        if not await embeddings.store_if_item(conn, event.tenant_id, item.id, self._provider.profile, vector):
            log.info("item %s of event %s was deleted while it was embedded; nothing stored", item.id, event.id)
            return None
        writes.stage(
            tenant_id=event.tenant_id,
            item_id=item.id,
            stage=PipelineStage.EMBEDDING,
            status=StageStatus.DONE,
            detail=self._provider.profile,
        )
        writes.event(
            self._outbox,
            Event(
                type=EventType.MEMORY_EMBEDDED.cloud_type,
                tenant_id=event.tenant_id,
                subject=str(item.id),
                traceparent=event.traceparent,
                data={
                    "item_id": str(item.id),
                    "profile": self._provider.profile,
                    "dimensions": self._provider.dimensions,
                    "kind": item.kind,
                },
            ),
        )
        if event.type != EventType.MEMORY_CREATED.cloud_type:  # a restored item's age says nothing about the pipeline
            return None
        return lambda: SEARCHABLE_LAG.observe(max((datetime.now(UTC) - item.created_at).total_seconds(), 0.0))

    async def _gone(self, conn: asyncpg.Connection, event: Event) -> None:
        """The event's item no longer exists: the event is handled (inbox row), nothing to embed."""
        if await inbox.claim(conn, CONSUMER, event.id, event.tenant_id):
            log.info("item %s of event %s no longer exists; nothing to embed", event.subject, event.id)

    async def mark_failed(self, event: Event, error: Exception) -> None:
        """After the last attempt: the status says failed, with the reason."""
        await changes.stage_failed(self._pool, event, PipelineStage.EMBEDDING, error)
