"""PATCH of an item's metadata: tags, importance, pinned, visibility, subject, valid_to. One locked read, the
rules, the row, one ``patched`` audit row holding only what changed, and ``memory.updated``, in one transaction.

Who may patch: a caller who may read the item and holds a writing role in its workspace. Widening the
visibility is writing at that visibility, as with remember; widening someone else's memory also needs a
reviewer (its author chose who may read it). A memory that becomes protected from expiry (pinned, importance
≥ 0.8, tagged ``permanent``) loses its ``expires_at``. A singleton kind's subject names its slot: it is not
patched (supersede instead)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import asyncpg

from engram.config import Settings
from engram.db import audit, items, kinds
from engram.db.pool import tenant_tx
from engram.domain import keys, lifecycle, patching, ttl, validation
from engram.domain.authority import may_pin
from engram.domain.content import index_context
from engram.domain.models import CallerContext, MemoryItem
from engram.domain.patching import PatchValues
from engram.domain.values import WRITING_ROLES, EventType, PatchField
from engram.errors import Conflict, NotFound, PermissionDenied
from engram.events.envelope import Event
from engram.events.outbox import Outbox


class PatchService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self._pool = pool
        self._outbox = Outbox(settings.events_subject_prefix)

    async def patch(self, ctx: CallerContext, item_id: str, fields: list[str], values: PatchValues) -> MemoryItem:
        """The item after the change; unchanged (and nothing written) when every value is already the item's."""
        validation.require_item_id(item_id)
        wanted = _validated({name: getattr(values, name) for name in patching.check_fields(fields)})
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            item = await items.get(conn, item_id, ctx.principal_id, for_update=True)
            if item is None:
                raise NotFound(f"no item {item_id}")
            _live(item)
            role = await items.workspace_role(conn, str(item.workspace_id), ctx.principal_id)
            if role not in WRITING_ROLES:
                raise PermissionDenied(
                    "changing a memory needs a writing role in its workspace", code="workspace_read_only"
                )
            changed = patching.changes(item, wanted)
            if not changed:
                return item
            await self._check(conn, ctx, item, changed)
            columns = {name: new for name, (_, new) in changed.items()}
            if PatchField.SUBJECT in changed:
                columns["index_context"] = index_context(columns[PatchField.SUBJECT], item.valid_from)
            merged = {name: columns.get(name, getattr(item, name)) for name in ("pinned", "importance", "tags")}
            if item.expires_at is not None and ttl.protection(**merged):
                changed["expires_at"] = (item.expires_at, None)
                columns["expires_at"] = None
            patched = await items.patch(conn, item_id, columns)
            await self._record(conn, ctx, item, changed)
        return patched

    async def _check(
        self, conn: asyncpg.Connection, ctx: CallerContext, item: MemoryItem, changed: dict[str, tuple[Any, Any]]
    ) -> None:
        if PatchField.VALID_TO in changed:
            validation.validate_validity(item.valid_from, changed[PatchField.VALID_TO][1])
        if changed.get(PatchField.PINNED, (None, False))[1] and not may_pin(ctx.principal_type, ctx.scopes):
            raise PermissionDenied(
                "an agent pins memories only with the review scope: a pinned memory enters every startup recall",
                field="pinned",
                code="pin_not_allowed",
            )
        if PatchField.VISIBILITY in changed:
            keys.require_publish(ctx.scopes, changed[PatchField.VISIBILITY][1])
        if PatchField.VISIBILITY in changed and patching.widens(item.visibility, changed[PatchField.VISIBILITY][1]):
            if ctx.principal_id != str(item.principal_id) and not lifecycle.is_reviewer(ctx):
                raise PermissionDenied(
                    "widening the visibility of another's memory needs the review scope and a non-agent principal",
                    field="visibility",
                    code="review_not_allowed",
                )
        if PatchField.SUBJECT in changed:
            kind = await kinds.get_kind(conn, item.kind)
            if kind is not None and kind.singleton:
                raise Conflict(
                    f"the subject of a {item.kind} names its singleton slot; supersede the memory to move it",
                    field="subject",
                    code="singleton_subject",
                )

    async def _record(
        self, conn: asyncpg.Connection, ctx: CallerContext, item: MemoryItem, changed: dict[str, tuple[Any, Any]]
    ) -> None:
        await audit.record(
            conn,
            tenant_id=ctx.tenant_id,
            item_id=item.id,
            actor_id=ctx.principal_id,
            action="patched",
            old_value={name: patching.plain(old) for name, (old, _) in changed.items()},
            new_value={name: patching.plain(new) for name, (_, new) in changed.items()},
            request_id=ctx.request_id,
        )
        await self._outbox.add(
            conn,
            Event(
                type=EventType.MEMORY_UPDATED.cloud_type,
                tenant_id=ctx.tenant_id,
                subject=str(item.id),
                traceparent=ctx.traceparent,
                data={"item_id": str(item.id), "changed": sorted(changed), "actor_id": ctx.principal_id},
            ),
        )


def _validated(wanted: dict[str, Any]) -> dict[str, Any]:
    """The wanted values under the rules remember applies to the same fields (tags cleaned)."""
    if PatchField.TAGS in wanted:
        wanted[PatchField.TAGS] = validation.validate_tags(wanted[PatchField.TAGS])
    if PatchField.IMPORTANCE in wanted:
        validation.validate_importance(wanted[PatchField.IMPORTANCE])
    if PatchField.VISIBILITY in wanted:
        validation.validate_visibility(wanted[PatchField.VISIBILITY])
    if PatchField.SUBJECT in wanted:
        validation.validate_label(wanted[PatchField.SUBJECT] or "", "subject")
        wanted[PatchField.SUBJECT] = wanted[PatchField.SUBJECT] or None
    return {str(name): value for name, value in wanted.items()}


def _live(item: MemoryItem) -> None:
    state = lifecycle.not_live(item, datetime.now(UTC))
    if state is not None:
        raise Conflict(f"item {item.id} is {state}; only live items can be patched", code="not_live")
