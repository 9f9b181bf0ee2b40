"""Embedding logic: read the items a batch of memory.created (or memory.restored) events names, embed those
still without a vector in one call, and store each vector with its inbox row, stage and memory.embedded
event in one transaction."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

import asyncpg

from engram.config import Settings
from engram.db import embeddings, inbox, items, outbox
from engram.db.pool import tenant_tx
from engram.domain.content import passage
from engram.domain.models import MemoryItem
from engram.embeddings.provider import EmbeddingProvider
from engram.events.envelope import Event
from engram.pipeline import changes
from engram.telemetry.metrics import EMBED_BATCH, EMBED_LATENCY, SEARCHABLE_LAG

log = logging.getLogger(__name__)

CONSUMER = "embedder"


class EmbedderService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings, provider: EmbeddingProvider) -> None:
        self._pool = pool
        self._settings = settings
        self._provider = provider

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
        """The item to embed, or None when there is nothing to do (already processed, or item gone)."""
        async with tenant_tx(self._pool, event.tenant_id) as conn:
            if await conn.fetchval("SELECT true FROM consumer_inbox WHERE consumer = $1 AND event_id = $2",
                                   CONSUMER, event.id):
                return None
            item = await items.get(conn, event.subject)
            if item is None:
                log.info("item %s of event %s no longer exists; nothing to embed", event.subject, event.id)
            elif await embeddings.exists(conn, str(item.id), self._provider.profile):
                return None  # a restored item came back with its vector
            return item

    async def _store(self, event: Event, item: MemoryItem, vector: object) -> None:
        async with tenant_tx(self._pool, event.tenant_id) as conn:
            if not await inbox.claim(conn, CONSUMER, event.id, event.tenant_id):
                return  # a concurrent replica got there first
            await embeddings.upsert(conn, event.tenant_id, item.id, self._provider.profile, vector)  # type: ignore[arg-type]
            await items.set_stage(conn, tenant_id=event.tenant_id, item_id=item.id, stage="embedding", status="done",
                                  detail=self._provider.profile)
            await outbox.add(conn, Event(
                type="engram.memory.embedded", tenant_id=event.tenant_id, subject=str(item.id),
                traceparent=event.traceparent,
                data={"item_id": str(item.id), "profile": self._provider.profile,
                      "dimensions": self._provider.dimensions, "kind": item.kind},
            ), self._settings.events_subject_prefix)
        if event.type == "engram.memory.created":  # a restored item's age says nothing about the pipeline
            SEARCHABLE_LAG.observe(max((datetime.now(UTC) - item.created_at).total_seconds(), 0.0))

    async def mark_failed(self, event: Event, error: Exception) -> None:
        """After the last attempt: the status says failed, with the reason."""
        await changes.stage_failed(self._pool, event, "embedding", error)
