"""Classification of new memories, once they are embedded (``memory.embedded``): read the items and the vectors the
embedder stored (a batch's events of one tenant in one transaction), classify outside any transaction (a model
call may take seconds), then apply what the rules allow, with its receipt, audit row, stage, inbox row and
``memory.classified`` event; the events of one tenant share that transaction, replayed one event per transaction
if it fails (``engram.pipeline.batches``).

The local kind model reads the stored vector when it is in the kind model's space (the local e5 model, its
profile and size: ``kind_model.stored_vectors_fit``); otherwise the classifier embeds the content itself, as it
did before it ran after the embedder. An item whose classification is already done (a restored item embedded
again, or an event delivered again after a consumer moved to ``memory.embedded``) is not classified again.

What a classification may change: the kind, only when the writer did not name one and neither the old nor
the new kind is singleton or review-gated (a classifier must not open or skip a review); wing and room, only
when unset; visibility, only narrower. Confidences, retention and sensitivity are always recorded.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any

import asyncpg
import numpy as np

from engram.config import Settings
from engram.db import classifications, embeddings, identity, inbox, items, kinds, stages
from engram.db.pool import tenant_tx
from engram.domain.classification import Classification, PlacementRule, narrow_visibility
from engram.domain.models import MemoryItem, MemoryKind
from engram.domain.values import EventType, PipelineStage, StageStatus
from engram.events.envelope import Event
from engram.events.outbox import Outbox
from engram.llm import JsonChat
from engram.pipeline import changes, classify, kind_model
from engram.pipeline.batches import Writes, apply_per_tenant, by_tenant
from engram.telemetry import tracing
from engram.telemetry.metrics import KIND_VECTORS

log = logging.getLogger(__name__)

CONSUMER = "classifier"
STAGE = PipelineStage.CLASSIFICATION


@dataclasses.dataclass(frozen=True)
class _Read:
    """What classifying one event needs from the database, read before any model call."""

    event: Event
    item: MemoryItem
    rules: list[PlacementRule]
    enabled: list[str]
    stored: np.ndarray | None  # the embedder's vector of the item, when the kind model can read it
    kinds: dict[str, MemoryKind]  # the tenant's kinds by name, for the rule on changing one


class ClassifierService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings, llm: JsonChat | None = None) -> None:
        self._pool = pool
        self._settings = settings
        self._llm = llm
        self._outbox = Outbox(settings.events_subject_prefix)

    async def handle(self, events: list[Event]) -> dict[str, Exception]:
        """Classify a batch: read each item, embed the contents for the local kind model in one call, then
        classify and apply each in its own transaction. Returns the events that failed (redelivered)."""
        failures: dict[str, Exception] = {}
        todo: list[_Read] = []
        for tenant_id, group in by_tenant([(event, None) for event in events]).items():
            try:
                todo += await self._read_all(tenant_id, [event for event, _ in group])
                continue
            except Exception as exc:  # find out which, one by one
                log.info("reading a batch of %d events failed (%r); reading them one by one", len(group), exc)
            for event, _ in group:
                try:
                    with tracing.within(event.traceparent):
                        read = await self._read(event)
                except Exception as exc:
                    failures[event.id] = exc
                    continue
                if read is not None:
                    todo.append(read)
        try:
            vectors = await self._kind_vectors(todo)
        except Exception as exc:
            return failures | {read.event.id: exc for read in todo}
        decided: list[tuple[Event, tuple[_Read, Classification, str | None]]] = []
        for read, vector in zip(todo, vectors, strict=True):
            try:
                with tracing.within(read.event.traceparent):
                    result, fallback = await classify.classify(
                        read.item.content,
                        read.rules,
                        read.enabled,
                        self._llm,
                        local=self._settings.classifier_local_model,
                        vector=vector,
                    )
            except Exception as exc:
                failures[read.event.id] = exc
                continue
            decided.append((read.event, (read, result, fallback)))
        return failures | await apply_per_tenant(self._pool, CONSUMER, decided, self._write)

    async def _kind_vectors(self, todo: list[_Read]) -> list[np.ndarray | None]:
        """The local kind model's vector of each item: the stored one when usable, else its content embedded here,
        all of those in one model call (None each when the local model is off). The one place that decides which
        vector the kind model reads for a consumed event."""
        if not self._settings.classifier_local_model or not todo:
            return [None] * len(todo)
        missing = [read.item.content for read in todo if read.stored is None]
        embedded = iter(await asyncio.to_thread(kind_model.embed_many, missing) if missing else [])
        KIND_VECTORS.labels("stored").inc(len(todo) - len(missing))
        KIND_VECTORS.labels("embedded").inc(len(missing))
        return [read.stored if read.stored is not None else next(embedded) for read in todo]

    async def _read_all(self, tenant_id: str, events: list[Event]) -> list[_Read]:
        """``_read`` for the events of one tenant, in one transaction: the tenant's rules and kinds read once, the
        items, their stages and vectors in one statement each."""
        todo: list[_Read] = []
        async with tenant_tx(self._pool, tenant_id) as conn:
            handled = await inbox.seen_among(conn, CONSUMER, [event.id for event in events])
            fresh = [event for event in events if event.id not in handled]
            if not fresh:
                return todo
            subjects = [event.subject for event in fresh]
            found = {str(item.id): item for item in await items.get_many(conn, subjects)}
            classified = await stages.done_among(conn, list(found), STAGE)
            rules: list[PlacementRule] = []
            enabled: list[str] = []
            known: dict[str, MemoryKind] = {}
            stored: dict[str, np.ndarray] = {}
            if any(subject in found and subject not in classified for subject in subjects):
                rules = classify.stored_placement_rules(await identity.config_value(conn, "placement_rules"))
                enabled = await kinds.enabled_kind_names(conn)
                known = await kinds.effective_kinds(conn)
                if self._settings.classifier_local_model and kind_model.stored_vectors_fit(self._settings):
                    stored = await embeddings.content_vectors(conn, list(found), self._settings.embedding_profile)
            for event in fresh:
                item = found.get(event.subject)
                if item is None:  # deleted before it was classified: the event is handled
                    if await inbox.claim(conn, CONSUMER, event.id, event.tenant_id):
                        log.info("item %s of event %s no longer exists; nothing to classify", event.subject, event.id)
                elif event.subject in classified:  # restored and embedded again, or redelivered
                    if await inbox.claim(conn, CONSUMER, event.id, event.tenant_id):
                        log.info("item %s of event %s is already classified", event.subject, event.id)
                else:
                    vector = stored.get(event.subject)
                    todo.append(
                        _Read(
                            event,
                            item,
                            rules,
                            enabled,
                            vector if kind_model.stored_vector_usable(vector) else None,
                            known,
                        )
                    )
        return todo

    async def _read(self, event: Event) -> _Read | None:
        """The item, its usable stored vector and the tenant's rules, or None when the event is already handled,
        its item is gone or the item is already classified."""
        async with tenant_tx(self._pool, event.tenant_id) as conn:
            if await inbox.seen(conn, CONSUMER, event.id):
                return None
            item = await items.get(conn, event.subject)
            if item is None:  # deleted before it was classified: the event is handled
                if await inbox.claim(conn, CONSUMER, event.id, event.tenant_id):
                    log.info("item %s of event %s no longer exists; nothing to classify", event.subject, event.id)
                return None
            if await stages.is_done(conn, event.subject, STAGE):  # restored and embedded again, or redelivered
                if await inbox.claim(conn, CONSUMER, event.id, event.tenant_id):
                    log.info("item %s of event %s is already classified", event.subject, event.id)
                return None
            rules = classify.stored_placement_rules(await identity.config_value(conn, "placement_rules"))
            enabled = await kinds.enabled_kind_names(conn)
            known = await kinds.effective_kinds(conn)
            stored = None
            if self._settings.classifier_local_model and kind_model.stored_vectors_fit(self._settings):
                stored = await embeddings.content_vector(conn, event.subject, self._settings.embedding_profile)
        usable = stored if kind_model.stored_vector_usable(stored) else None
        return _Read(event, item, rules, enabled, usable, known)

    async def _write(
        self, conn: asyncpg.Connection, writes: Writes, event: Event, decided: tuple[_Read, Classification, str | None]
    ) -> None:
        """Apply one classification in the caller's transaction (its inbox row recorded; its receipt, audit row,
        stage and event queued in ``writes``), unless the item was handled meanwhile."""
        read, result, fallback = decided
        current = await items.get(conn, event.subject, for_update=True)
        if current is None:  # deleted while it was classified: the event is handled
            log.info("item %s of event %s no longer exists; nothing to classify", event.subject, event.id)
            return
        # another event of the item got there first (earlier in this batch: its stage is still queued)
        if writes.stage_done(event.subject, STAGE) or await stages.is_done(conn, event.subject, STAGE):
            return
        await self._apply(conn, writes, event, current, result, fallback, read.kinds)

    async def _apply(
        self,
        conn: asyncpg.Connection,
        writes: Writes,
        event: Event,
        item: MemoryItem,
        result: Classification,
        fallback: str | None,
        known: dict[str, MemoryKind],
    ) -> None:
        values: dict[str, Any] = {
            "taxonomy_confidence": result.taxonomy_confidence,
            "retention": result.retention,
            "retention_confidence": result.retention_confidence,
            "sensitivity": result.sensitivity,
        }
        notes: list[str] = []
        if result.kind != item.kind:
            why_not = _kind_change_refused(known, item, result.kind)
            if why_not:
                notes.append(f"kind {result.kind} suggested, not applied: {why_not}")
            else:
                values["kind"] = result.kind
        if item.wing is None and result.wing:
            values["wing"] = result.wing
            if item.room is None and result.room:
                values["room"] = result.room
        narrowed = narrow_visibility(item.visibility, result.suggested_visibility)
        if narrowed != item.visibility:
            values["visibility"] = narrowed
        changed = await classifications.apply(conn, str(item.id), values)
        applied = {
            name: [_plain(getattr(item, name)), _plain(value)]
            for name, value in values.items()
            if _plain(getattr(item, name)) != _plain(value)
        }
        output = {**dataclasses.asdict(result), "reasons": list(result.reasons), "notes": notes}
        writes.receipt(
            tenant_id=event.tenant_id,
            item_id=str(item.id),
            classifier=result.classifier,
            fallback_reason=fallback,
            output=output,
            applied=applied,
        )
        structural = {k: v for k, v in applied.items() if k in ("kind", "wing", "room", "visibility")}
        if structural:
            writes.audit(
                tenant_id=event.tenant_id,
                item_id=str(item.id),
                actor_id=None,
                action="classified",
                old_value={k: v[0] for k, v in structural.items()},
                new_value={k: v[1] for k, v in structural.items()},
                reason=f"{result.classifier}: {'; '.join(result.reasons)[:500]}",
            )
        writes.stage(
            tenant_id=event.tenant_id,
            item_id=item.id,
            stage=STAGE,
            status=StageStatus.DONE,
            detail=result.classifier + (f" (fallback: {fallback})" if fallback else ""),
        )
        writes.event(
            self._outbox,
            Event(
                type=EventType.MEMORY_CLASSIFIED.cloud_type,
                tenant_id=event.tenant_id,
                subject=str(item.id),
                traceparent=event.traceparent,
                data={
                    "item_id": str(item.id),
                    "kind": changed.kind,
                    "suggested_kind": result.kind,
                    "retention": result.retention,
                    "retention_confidence": result.retention_confidence,
                    "taxonomy_confidence": result.taxonomy_confidence,
                    "sensitivity": result.sensitivity,
                    "wing": changed.wing,
                    "room": changed.room,
                    "visibility": changed.visibility,
                    "changed": sorted(applied),
                    "classifier": result.classifier,
                    "fallback": fallback is not None,
                },
            ),
        )

    async def mark_failed(self, event: Event, error: Exception) -> None:
        await changes.stage_failed(self._pool, event, STAGE, error)


def _kind_change_refused(known: dict[str, MemoryKind], item: MemoryItem, suggested: str) -> str | None:
    """Why the classifier may not change the item's kind to ``suggested`` (None: it may), by the tenant's kinds as
    read with the item."""
    if item.kind_explicit:
        return "the writer chose the kind"
    old, new = known.get(item.kind), known.get(suggested)
    if new is None or not new.enabled:
        return "kind not enabled"
    if any(k is not None and (k.singleton or k.requires_review) for k in (old, new)):
        return "singleton and review-gated kinds are only chosen by the writer"
    return None


def _plain(value: Any) -> Any:
    return round(value, 4) if isinstance(value, float) else value
