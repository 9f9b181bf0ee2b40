"""A reviewer's decision on a conflict, applied to both memories and the conflict in one transaction.

- ``keep_existing``: the new memory is rejected (archived when it was already active); a disputed existing
  memory is active again.
- ``accept_new``: the new memory supersedes the existing one and is active.
- ``keep_both``: both stand; a disputed or proposed side becomes active. Refused for singleton kinds, whose
  slot holds one memory.
- ``merge``: a new memory with the reviewer's ``content`` (and the reviewer's authority) supersedes both.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from engram.config import Settings
from engram.db import conflicts, items, kinds
from engram.db.pool import tenant_tx
from engram.domain import lifecycle, validation
from engram.domain.models import CallerContext, ConflictRecord, MemoryItem
from engram.domain.values import Resolution, ReviewStatus
from engram.errors import Conflict, NotFound, PermissionDenied, ValidationFailed
from engram.events.outbox import Outbox
from engram.pipeline import changes
from services.ingest.service import IngestService, RememberCommand

RESOLUTIONS = ("keep_existing", "accept_new", "keep_both", "merge")


@dataclass
class Decision:
    conflict: ConflictRecord
    existing: MemoryItem
    new: MemoryItem
    merged: MemoryItem | None = None


class ConflictService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings, ingest: IngestService) -> None:
        self._pool = pool
        self._settings = settings
        self._ingest = ingest
        self._changes = changes.Changes(Outbox(settings.events_subject_prefix))

    async def resolve(
        self, ctx: CallerContext, conflict_id: str, resolution: str, reason: str, content: str
    ) -> Decision:
        if not validation.is_uuid(conflict_id):
            raise NotFound(f"no conflict {conflict_id}")
        if resolution not in RESOLUTIONS:
            raise ValidationFailed(
                f"resolution must be one of {', '.join(RESOLUTIONS)}; got {resolution!r}", field="resolution"
            )
        if not lifecycle.is_reviewer(ctx):
            raise PermissionDenied(
                "resolving a conflict needs the review scope and a non-agent principal", code="review_not_allowed"
            )
        if (resolution == Resolution.MERGE) != bool(content.strip()):
            raise ValidationFailed("content is required for merge, and only for merge", field="content")
        reason = reason.strip()[:2_000]
        merged = None
        if resolution == Resolution.MERGE:
            async with tenant_tx(self._pool, ctx.tenant_id) as conn:
                row = await self._open_conflict(conn, ctx, conflict_id)
                existing = await items.get(conn, row.item_a, ctx.principal_id)
            assert existing is not None
            merged = (
                await self._ingest.remember(
                    ctx,
                    RememberCommand(
                        content=content,
                        kind=existing.kind,
                        subject=existing.subject or "",
                        wing=existing.wing or "",
                        room=existing.room or "",
                        visibility=existing.visibility,
                        workspace_id=str(existing.workspace_id),
                        supersedes=[row.item_a, row.item_b],
                    ),
                )
            ).item
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            row = await self._open_conflict(conn, ctx, conflict_id)
            existing_item = await items.get(conn, row.item_a, for_update=True)
            new_item = await items.get(conn, row.item_b, for_update=True)
            assert existing_item is not None and new_item is not None
            actor = changes.Actor(
                ctx.tenant_id, ctx.principal_id, request_id=ctx.request_id, traceparent=ctx.traceparent
            )
            why = f"conflict {conflict_id} resolved ({resolution})" + (f": {reason}" if reason else "")
            if resolution == Resolution.KEEP_EXISTING:
                if new_item.review_status in ("proposed", "disputed"):
                    new_item = await self._changes.change_status(conn, actor, new_item, "rejected", "reject", why)
                elif new_item.review_status == ReviewStatus.ACTIVE:
                    new_item = await self._changes.change_status(conn, actor, new_item, "archived", "archive", why)
                existing_item = await self._reinstate(conn, actor, existing_item, why)
            elif resolution == Resolution.ACCEPT_NEW:
                if new_item.invalidated_at is not None or new_item.superseded_by is not None:
                    raise Conflict(
                        "the new memory is no longer live; keep the existing one or merge",
                        field="resolution",
                        code="not_live",
                    )
                if existing_item.review_status in lifecycle.LIVE_STATES and existing_item.superseded_by is None:
                    await self._changes.supersede(conn, actor, existing_item, new_item, why, accepted_by_review=True)
                new_item = await self._reinstate(conn, actor, new_item, why)
            elif resolution == Resolution.KEEP_BOTH:
                kind = await kinds.get_kind(conn, new_item.kind)
                if kind is not None and kind.singleton and new_item.subject:
                    raise Conflict(
                        f"a {kind.name} holds one memory per subject; keep one, accept the new, or merge",
                        field="resolution",
                        code="singleton_keep_both",
                    )
                existing_item = await self._reinstate(conn, actor, existing_item, why)
                new_item = await self._reinstate(conn, actor, new_item, why)
            await self._changes.resolve_conflicts(
                conn, actor, row.item_a, resolution, reason or None, conflict_id=conflict_id
            )
            loser = {"keep_existing": row.item_b, "accept_new": row.item_a}.get(resolution)
            if loser is not None:  # it left the running: its other conflicts are settled for their other sides
                await self._changes.settle_conflicts_of(conn, actor, loser, why)
            resolved = await conflicts.get(conn, conflict_id, ctx.principal_id)
            existing_now = await items.get(conn, row.item_a)
            new_now = await items.get(conn, row.item_b)
        assert resolved is not None and existing_now is not None and new_now is not None
        return Decision(resolved, existing_now, new_now, merged)

    async def _open_conflict(self, conn: asyncpg.Connection, ctx: CallerContext, conflict_id: str) -> ConflictRecord:
        row = await conflicts.get(conn, conflict_id, ctx.principal_id, for_update=True)
        if row is None:
            raise NotFound(f"no conflict {conflict_id}")
        if row.status != "open":
            raise Conflict(f"conflict {conflict_id} is already resolved ({row.resolution})", code="already_resolved")
        return row

    async def _reinstate(
        self, conn: asyncpg.Connection, actor: changes.Actor, item: MemoryItem, why: str
    ) -> MemoryItem:
        """A disputed or proposed memory the reviewer upheld becomes active."""
        if item.review_status in ("disputed", "proposed") and item.invalidated_at is None:
            return await self._changes.change_status(conn, actor, item, "active", "activate", why)
        return item
