"""Lifecycle changes as every writer makes them: the row, its audit entry and its event, inside the caller's
transaction. Ingest (for callers), the conflicts consumer and promotion (for the system) share these, so a
status change or a supersession looks the same in the trail and on the bus whoever made it.

A service makes one ``Changes`` over its outbox and passes it down; each change names the connection and
the ``Actor``."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import asyncpg

from engram.db import audit, conflicts, items, stages
from engram.db.pool import tenant_tx
from engram.domain.models import MemoryItem
from engram.domain.values import EventType, PipelineStage, ReviewStatus, StageStatus
from engram.errors import NotFound
from engram.events.envelope import Event
from engram.events.outbox import Outbox

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Actor:
    """Who makes a change: a principal (with its request) or a pipeline component (``by``, no principal)."""

    tenant_id: str
    principal_id: str | None = None
    by: str | None = None  # "conflicts", "promotion", …
    request_id: str = ""
    traceparent: str = ""


class Changes:
    """The lifecycle changes, announced through one service's outbox."""

    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    async def change_status(
        self, conn: asyncpg.Connection, actor: Actor, item: MemoryItem, to_state: str, action: str, reason: str | None
    ) -> MemoryItem:
        """Move ``item`` (locked by the caller) to ``to_state``: ``review.<action>`` in the trail and
        ``memory.review_changed`` on the bus."""
        changed = await items.set_review_status(conn, str(item.id), to_state)
        if (
            item.review_status == ReviewStatus.PROPOSED and to_state != ReviewStatus.PROPOSED
        ):  # promotion has nothing left to decide
            await stages.finish(
                conn, str(item.id), PipelineStage.PROMOTION, f"{to_state} by {actor.by or 'review'} ({action})"
            )
        await audit.record(
            conn,
            tenant_id=actor.tenant_id,
            item_id=item.id,
            actor_id=actor.principal_id,
            action=f"review.{action}",
            old_value={"review_status": item.review_status},
            new_value={"review_status": to_state},
            reason=reason,
            request_id=actor.request_id,
        )
        data: dict[str, Any] = {
            "item_id": str(item.id),
            "action": action,
            "from": item.review_status,
            "to": to_state,
            "actor_id": actor.principal_id,
            "kind": item.kind,
        }
        if actor.by:
            data["by"] = actor.by
        await self.outbox.add(
            conn,
            Event(
                type=EventType.MEMORY_REVIEW_CHANGED.cloud_type,
                tenant_id=actor.tenant_id,
                subject=str(item.id),
                traceparent=actor.traceparent,
                data=data,
            ),
        )
        return changed

    async def supersede(
        self,
        conn: asyncpg.Connection,
        actor: Actor,
        old: MemoryItem,
        new: MemoryItem,
        reason: str | None = None,
        **extra: Any,
    ) -> None:
        """``new`` replaces ``old`` (both locked by the caller): the pointer and typed link, ``superseded`` in
        the old item's trail, ``memory.superseded`` on the bus (``extra`` adds data fields)."""
        await items.supersede(conn, str(old.id), str(new.id), actor.principal_id)
        await audit.record(
            conn,
            tenant_id=actor.tenant_id,
            item_id=old.id,
            actor_id=actor.principal_id,
            action="superseded",
            old_value={"review_status": old.review_status},
            new_value={"review_status": "superseded", "superseded_by": str(new.id)},
            reason=reason,
            request_id=actor.request_id,
        )
        data: dict[str, Any] = {
            "item_id": str(old.id),
            "superseded_by": str(new.id),
            "actor_id": actor.principal_id,
            "kind": old.kind,
            "authority": new.authority,
            **extra,
        }
        if actor.by:
            data["by"] = actor.by
        await self.outbox.add(
            conn,
            Event(
                type=EventType.MEMORY_SUPERSEDED.cloud_type,
                tenant_id=actor.tenant_id,
                subject=str(old.id),
                traceparent=actor.traceparent,
                data=data,
            ),
        )

    async def open_conflict(
        self,
        conn: asyncpg.Connection,
        actor: Actor,
        existing: MemoryItem,
        new: MemoryItem,
        conflict_type: str,
        detector: str,
        *,
        score: float | None = None,
        rule: str | None = None,
        explanation: str | None = None,
    ) -> str | None:
        """Open a conflict between two items and announce it; None when the pair already has an open one."""
        conflict_id = await conflicts.open(
            conn,
            actor.tenant_id,
            str(existing.id),
            str(new.id),
            conflict_type,
            detector,
            score=score,
            rule=rule,
            explanation=explanation,
        )
        if conflict_id is None:
            return None
        await self.outbox.add(
            conn,
            Event(
                type=EventType.CONFLICT_DETECTED.cloud_type,
                tenant_id=actor.tenant_id,
                subject=conflict_id,
                traceparent=actor.traceparent,
                data={
                    "conflict_id": conflict_id,
                    "existing_item_id": str(existing.id),
                    "new_item_id": str(new.id),
                    "type": conflict_type,
                    "detector": detector,
                    "rule": rule,
                    "score": score,
                    "kind": new.kind,
                    "existing_authority": existing.authority,
                    "new_authority": new.authority,
                },
            ),
        )
        return conflict_id

    async def resolve_conflicts(
        self,
        conn: asyncpg.Connection,
        actor: Actor,
        item_id: str,
        resolution: str,
        reason: str | None,
        *,
        other: str | None = None,
        conflict_id: str | None = None,
    ) -> list[conflicts.Resolved]:
        """Resolve the open conflicts of ``item_id`` (only the one with ``other``, or only ``conflict_id``) and
        announce each with ``conflict.resolved``."""
        resolved = await conflicts.resolve_open(
            conn, item_id, resolution, actor.principal_id, reason, other=other, conflict_id=conflict_id
        )
        for r in resolved:
            await self.outbox.add(
                conn,
                Event(
                    type=EventType.CONFLICT_RESOLVED.cloud_type,
                    tenant_id=actor.tenant_id,
                    subject=r.id,
                    traceparent=actor.traceparent,
                    data={
                        "conflict_id": r.id,
                        "item_a": r.item_a,
                        "item_b": r.item_b,
                        "type": r.type,
                        "resolution": resolution,
                        "resolver_id": actor.principal_id,
                    },
                ),
            )
        return resolved

    async def settle_conflicts_of(
        self, conn: asyncpg.Connection, actor: Actor, item_id: str, reason: str | None
    ) -> list[conflicts.Resolved]:
        """``item_id`` left the running (rejected, archived, withdrawn): each of its open conflicts is resolved
        for the other side — ``keep_existing`` when it was the newcomer, ``accept_new`` when it was the
        incumbent."""
        settled: list[conflicts.Resolved] = []
        for conflict_id, existing, _new in await conflicts.open_pairs(conn, item_id):
            resolution = "accept_new" if existing == item_id else "keep_existing"
            settled += await self.resolve_conflicts(conn, actor, item_id, resolution, reason, conflict_id=conflict_id)
        return settled


async def stage_failed(pool: asyncpg.Pool, event: Event, stage: str, error: Exception) -> None:
    """A consumer gave up on ``event``: its item's ``stage`` says failed, with the reason (when the item is
    still there)."""
    try:
        async with tenant_tx(pool, event.tenant_id) as conn:
            await stages.record(
                conn,
                tenant_id=event.tenant_id,
                item_id=event.subject,
                stage=stage,
                status=StageStatus.FAILED,
                detail=repr(error)[:500],
            )
    except NotFound:
        log.info("item %s of event %s no longer exists; no %s stage to mark failed", event.subject, event.id, stage)
