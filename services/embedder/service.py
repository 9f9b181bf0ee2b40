"""Embedding logic: read the items a batch of memory.created (or memory.restored) events names, embed those
still without a vector in one call, and store each vector with its inbox row, stage and memory.embedded
event in one transaction.

An item deleted (moved to the trash) before its vector is stored is an expected outcome, not a failure: the
event is recorded as handled in the inbox, nothing is stored, and it is acknowledged. A restore announces
``memory.restored``, which embeds the item again if its vector did not come back with it."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

import asyncpg
import numpy as np

from engram.config import Settings
from engram.db import embeddings, inbox, items, stages
from engram.db.pool import tenant_tx
from engram.domain.content import passage
from engram.domain.models import MemoryItem
from engram.domain.values import EventType, PipelineStage, StageStatus
from engram.embeddings.provider import EmbeddingProvider
from engram.events.envelope import Event
from engram.events.outbox import Outbox
from engram.pipeline import changes
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
        for event in events:
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
        for (event, item), vector in zip(todo, vectors, strict=True):
            try:
                await self._store(event, item, vector)
            except Exception as exc:
                failures[event.id] = exc
        return failures

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

    async def _store(self, event: Event, item: MemoryItem, vector: np.ndarray) -> None:
        async with tenant_tx(self._pool, event.tenant_id) as conn:
            if not await inbox.claim(conn, CONSUMER, event.id, event.tenant_id):
                return  # a concurrent replica got there first
            if not await items.hold(conn, str(item.id)):  # deleted while it was being embedded
                log.info("item %s of event %s was deleted while it was embedded; nothing stored", item.id, event.id)
                return
            await embeddings.upsert(conn, event.tenant_id, item.id, self._provider.profile, vector)
            await stages.record(
                conn,
                tenant_id=event.tenant_id,
                item_id=item.id,
                stage=PipelineStage.EMBEDDING,
                status=StageStatus.DONE,
                detail=self._provider.profile,
            )
            await self._outbox.add(
                conn,
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
        if event.type == EventType.MEMORY_CREATED.cloud_type:  # a restored item's age says nothing about the pipeline
            SEARCHABLE_LAG.observe(max((datetime.now(UTC) - item.created_at).total_seconds(), 0.0))

    async def _gone(self, conn: asyncpg.Connection, event: Event) -> None:
        """The event's item no longer exists: the event is handled (inbox row), nothing to embed."""
        if await inbox.claim(conn, CONSUMER, event.id, event.tenant_id):
            log.info("item %s of event %s no longer exists; nothing to embed", event.subject, event.id)

    async def mark_failed(self, event: Event, error: Exception) -> None:
        """After the last attempt: the status says failed, with the reason."""
        await changes.stage_failed(self._pool, event, PipelineStage.EMBEDDING, error)
