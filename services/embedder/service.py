"""Embedding logic: read the items a batch of memory.created (or memory.restored) events names (one transaction per
tenant), embed those still without a vector in one call, and store each vector with its inbox row, stage and
memory.embedded event; the stores of one tenant share a transaction, replayed one event per transaction if it
fails (``engram.pipeline.batches``).

An item deleted (moved to the trash) before its vector is stored is an expected outcome, not a failure: the
event is recorded as handled in the inbox, nothing is stored, and it is acknowledged. A restore announces
``memory.restored``, which embeds the item again if its vector did not come back with it.

With context passages (docs/adr/0009-context-passages.md) an item with a predecessor is embedded with it; when
a memory is deleted, expires or has its visibility changed (``recheck``), the items whose vector was built with
it, and the memory itself, get their predecessor chosen again and are embedded again where it changed; when it is
restored, so do the items whose predecessor it is now (``handle`` runs ``recheck`` for memory.restored)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
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
from engram.errors import Unavailable
from engram.events.envelope import Event
from engram.events.outbox import Outbox
from engram.pipeline import changes
from engram.pipeline.batches import Writes, apply_per_tenant, by_tenant
from engram.telemetry.metrics import EMBED_BATCH, EMBED_LATENCY, SEARCHABLE_LAG

log = logging.getLogger(__name__)

CONSUMER = "embedder"
RECHECK_CONSUMER = "embedder_context"  # the inbox name of the durables that take memory.deleted/expired/updated


@dataclass(frozen=True)
class Embedded:
    """An item's vectors: ``vector`` is the one recall searches; when it was built with the item's predecessor
    (``context_item_id``), ``content`` is the vector of the item's own text."""

    item: MemoryItem
    vector: np.ndarray
    content: np.ndarray | None = None
    context_item_id: str | None = None


# An event's item to embed, with its predecessor when it has one.
Todo = tuple[Event, MemoryItem, embeddings.Predecessor | None]
# The items an event makes embed again, each with its predecessor now (None: its own text alone).
Again = list[tuple[MemoryItem, embeddings.Predecessor | None]]


class EmbedderService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings, provider: EmbeddingProvider) -> None:
        self._pool = pool
        self._settings = settings
        self._provider = provider
        self._outbox = Outbox(settings.events_subject_prefix)

    async def handle(self, events: list[Event]) -> dict[str, Exception]:
        """Embed the items of a batch; with context passages, a memory.restored also embeds again the items whose
        predecessor is the restored memory now (``recheck``). Return the events that failed (they will be
        redelivered; each part finds its own inbox row if it was done before)."""
        failures = await self._embed_new(events)
        restored = [
            event for event in events if event.type == EventType.MEMORY_RESTORED.cloud_type and event.id not in failures
        ]
        if not restored or not self._settings.context_passages:
            return failures
        return failures | await self.recheck(restored)

    async def _embed_new(self, events: list[Event]) -> dict[str, Exception]:
        """Embed each event's item that has no vector yet; the events that failed."""
        failures: dict[str, Exception] = {}
        todo: list[Todo] = []
        for tenant_id, group in by_tenant([(event, None) for event in events]).items():
            try:
                todo += await self._load_all(tenant_id, [event for event, _ in group])
                continue
            except Exception as exc:  # find out which, one by one
                log.info("reading a batch of %d events failed (%r); reading them one by one", len(group), exc)
            for event, _ in group:
                try:
                    one = await self._load(event)
                except Exception as exc:
                    failures[event.id] = exc
                    continue
                if one is not None:
                    todo.append(one)
        if not todo:
            return failures
        try:
            embedded = await self._embed([(item, context) for _, item, context in todo])
        except Exception as exc:
            return failures | {event.id: exc for event, _, _ in todo}
        stored = [(event, one) for (event, _, _), one in zip(todo, embedded, strict=True)]
        return failures | await apply_per_tenant(self._pool, CONSUMER, stored, self._store)

    async def _embed(self, todo: list[tuple[MemoryItem, embeddings.Predecessor | None]]) -> list[Embedded]:
        """Each item's vectors, in one provider call: the passage of its own text, and for an item with a
        predecessor the passage of the predecessor's text and its own too (the vector recall searches)."""
        texts = [passage(item.content, item.valid_from) for item, _ in todo]
        joined = [(i, context) for i, (_, context) in enumerate(todo) if context is not None]
        texts += [passage(context.content + "\n" + todo[i][0].content, todo[i][0].valid_from) for i, context in joined]
        started = time.perf_counter()
        vectors = await self._provider.embed_passages(texts)
        EMBED_LATENCY.labels(self._provider.profile).observe(time.perf_counter() - started)
        EMBED_BATCH.observe(len(texts))
        embedded = [Embedded(item, vector) for (item, _), vector in zip(todo, vectors, strict=False)]
        for (i, context), vector in zip(joined, vectors[len(todo) :], strict=True):
            embedded[i] = Embedded(embedded[i].item, vector, embedded[i].vector, context.id)
        return embedded

    async def _contexts(self, conn: asyncpg.Connection, found: list[MemoryItem]) -> dict[str, embeddings.Predecessor]:
        """The predecessor of each item that has one (none with the setting off), in one statement."""
        if not self._settings.context_passages or not found:
            return {}
        return await embeddings.predecessors(conn, [str(item.id) for item in found])

    async def _load_all(self, tenant_id: str, events: list[Event]) -> list[Todo]:
        """``_load`` for the events of one tenant, in one transaction and four reads."""
        todo: list[tuple[Event, MemoryItem]] = []
        async with tenant_tx(self._pool, tenant_id) as conn:
            handled = await inbox.seen_among(conn, CONSUMER, [event.id for event in events])
            fresh = [event for event in events if event.id not in handled]
            if not fresh:
                return []
            found = {str(item.id): item for item in await items.get_many(conn, [event.subject for event in fresh])}
            embedded = await embeddings.having(conn, list(found), self._provider.profile)
            for event in fresh:
                item = found.get(event.subject)
                if item is None:
                    await self._gone(conn, event)
                elif event.subject not in embedded:  # else a restored item that came back with its vector
                    todo.append((event, item))
            contexts = await self._contexts(conn, [item for _, item in todo])
        return [(event, item, contexts.get(str(item.id))) for event, item in todo]

    async def _load(self, event: Event) -> Todo | None:
        """The item to embed with its predecessor, or None when there is nothing to do (already processed, item
        gone, or a restored item that came back with its vector)."""
        async with tenant_tx(self._pool, event.tenant_id) as conn:
            if await inbox.seen(conn, CONSUMER, event.id):
                return None
            item = await items.get(conn, event.subject)
            if item is None:
                await self._gone(conn, event)
                return None
            if await embeddings.exists(conn, str(item.id), self._provider.profile):
                return None  # a restored item came back with its vector
            return event, item, (await self._contexts(conn, [item])).get(str(item.id))

    async def recheck(self, events: list[Event]) -> dict[str, Exception]:
        """For a batch of memory.deleted, memory.expired, memory.updated (and memory.restored) events: embed again
        each item whose vector was built with the event's memory as its predecessor (and the memory itself), and,
        for a restore, each item whose predecessor is the restored memory now, if its predecessor, chosen again,
        is another one than its vector was built with (or none), in one provider call; store them with the
        event's inbox row (``RECHECK_CONSUMER``), the stores of a tenant in one transaction. No stage and no
        memory.embedded: what each memory says by itself has not changed. Returns the events that failed."""
        failures: dict[str, Exception] = {}
        jobs: list[tuple[Event, Again]] = []
        for tenant_id, group in by_tenant([(event, None) for event in events]).items():
            try:
                jobs += await self._stale(tenant_id, [event for event, _ in group])
            except Exception as exc:
                failures |= {event.id: exc for event, _ in group}
        flat = [one for _, todo in jobs for one in todo]
        try:
            embedded = await self._embed(flat) if flat else []
        except Exception as exc:
            return failures | {event.id: exc for event, _ in jobs}
        stored: list[tuple[Event, list[Embedded]]] = []
        for event, todo in jobs:
            stored.append((event, embedded[: len(todo)]))
            embedded = embedded[len(todo) :]
        return failures | await apply_per_tenant(self._pool, RECHECK_CONSUMER, stored, self._store_again)

    async def _stale(self, tenant_id: str, events: list[Event]) -> list[tuple[Event, Again]]:
        """Each event of the tenant not handled before, with the items to embed again and their predecessor now,
        in one transaction (an item named by two events goes with the first): those built on the event's memory
        (``built_on``), and for a restore or a visibility change those whose predecessor it is now but not yet in
        their vector (``built_without``)."""
        async with tenant_tx(self._pool, tenant_id) as conn:
            handled = await inbox.seen_among(conn, RECHECK_CONSUMER, [event.id for event in events])
            fresh = [event for event in events if event.id not in handled and _may_change_contexts(event)]
            quiet: list[tuple[Event, Again]] = [
                (event, []) for event in events if event.id not in handled and not _may_change_contexts(event)
            ]
            if not fresh:
                return quiet
            built = await embeddings.built_on(conn, [event.subject for event in fresh], self._provider.profile)
            # a memory restored, or made readable as widely as the memories after it: it may precede them now
            back = [event.subject for event in fresh if event.type in _MAY_PRECEDE_AGAIN]
            if back:
                built |= await embeddings.built_without(conn, back, self._provider.profile)
            found = {str(item.id): item for item in await items.get_many(conn, list(built))}
            now = await self._contexts(conn, list(found.values()))
        jobs = list(quiet)
        taken: set[str] = set()
        for event in fresh:
            todo: Again = []
            for item_id, context in built.items():
                chosen = now.get(item_id)
                named = event.subject in (context, item_id, chosen.id if chosen else None)
                if named and item_id in found and item_id not in taken and (chosen.id if chosen else None) != context:
                    todo.append((found[item_id], chosen))
                    taken.add(item_id)
            jobs.append((event, todo))
        return jobs

    async def _store_again(
        self, conn: asyncpg.Connection, writes: Writes, event: Event, embedded: list[Embedded]
    ) -> None:
        """Store the vectors of the items an event made embed again, in the caller's transaction (its inbox row
        recorded); an item deleted meanwhile is skipped."""
        for one in embedded:
            stored = await embeddings.store_if_item(
                conn,
                event.tenant_id,
                one.item.id,
                self._provider.profile,
                one.vector,
                one.content,
                one.context_item_id,
            )
            if stored:
                log.info(
                    "item %s embedded again with predecessor %s (%s)", one.item.id, one.context_item_id, event.type
                )
            elif one.context_item_id is not None and await items.get(conn, str(one.item.id)) is not None:
                raise Unavailable(  # retried: its predecessor is chosen again
                    f"the predecessor {one.context_item_id} of item {one.item.id} was deleted or changed"
                    " while it was embedded"
                )

    async def _store(
        self, conn: asyncpg.Connection, writes: Writes, event: Event, embedded: Embedded
    ) -> Callable[[], None] | None:
        """Store one item's vectors in the caller's transaction (its inbox row recorded, its stage and event
        queued); what to observe once it has committed."""
        item = embedded.item
        if not await embeddings.store_if_item(
            conn,
            event.tenant_id,
            item.id,
            self._provider.profile,
            embedded.vector,
            embedded.content,
            embedded.context_item_id,
        ):
            if embedded.context_item_id is not None and await items.get(conn, str(item.id)) is not None:
                raise Unavailable(  # retried: the item is embedded again with its predecessor chosen again
                    f"the predecessor {embedded.context_item_id} of item {item.id} was deleted or changed"
                    " while it was embedded"
                )
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

    async def recheck_failed(self, event: Event, error: Exception) -> None:
        """After the last attempt of a ``recheck``: logged (the items keep the vectors they had)."""
        log.error("embedding again the items built on %s (%s) failed: %r", event.subject, event.type, error)

    async def _gone(self, conn: asyncpg.Connection, event: Event) -> None:
        """The event's item no longer exists: the event is handled (inbox row), nothing to embed."""
        if await inbox.claim(conn, CONSUMER, event.id, event.tenant_id):
            log.info("item %s of event %s no longer exists; nothing to embed", event.subject, event.id)

    async def mark_failed(self, event: Event, error: Exception) -> None:
        """After the last attempt: the status says failed, with the reason; for a memory.restored whose memory has
        its vector, what failed was embedding again the items after it (``recheck_failed``)."""
        if event.type == EventType.MEMORY_RESTORED.cloud_type:
            async with tenant_tx(self._pool, event.tenant_id) as conn:
                embedded = await embeddings.exists(conn, event.subject, self._provider.profile)
            if embedded:
                await self.recheck_failed(event, error)
                return
        await changes.stage_failed(self._pool, event, PipelineStage.EMBEDDING, error)


# events after which a memory may be the predecessor of memories it was not built into: back from the trash, or
# its visibility changed (widened: a workspace turn after it can read it now)
_MAY_PRECEDE_AGAIN = frozenset({EventType.MEMORY_RESTORED.cloud_type, EventType.MEMORY_UPDATED.cloud_type})


def _may_change_contexts(event: Event) -> bool:
    """Whether the event can change which memory is an item's predecessor: a memory gone (deleted, expired) or
    back (restored), or its visibility changed."""
    if event.type == EventType.MEMORY_UPDATED.cloud_type:
        return "visibility" in (event.data.get("changed") or [])
    return True
