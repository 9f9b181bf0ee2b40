"""Listings in pages: the trash, the open and resolved conflicts, and the memories about to expire."""

from __future__ import annotations

import base64
from datetime import datetime

import asyncpg

from engram.config import Settings
from engram.db import clock, conflicts, identity, items, trash
from engram.db.pool import tenant_tx
from engram.domain import validation
from engram.domain.models import CallerContext, MemoryItem
from engram.domain.values import ConflictStatus, ConflictType
from engram.errors import ValidationFailed
from services.recall.shown import items_shown

MAX_PAGE = 500
MAX_WITHIN_DAYS = 3_650


class Listings:
    """``ListTrash``, ``ListConflicts`` and ``ExpiryCandidates``, each limited to what the caller may see."""

    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self._pool = pool
        self._settings = settings

    async def list_trash(self, ctx: CallerContext, limit: int, cursor: str) -> tuple[list[trash.Entry], str]:
        """A page of the trash the caller may see, newest first, and the cursor of the next page ("" at the end)."""
        _check_limit(limit)
        after = _decode_cursor(cursor) if cursor else None
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            entries = await trash.listing(conn, ctx.principal_id, limit + 1, after)
        more = len(entries) > limit
        entries = entries[:limit]
        last = entries[-1] if entries else None
        next_cursor = _encode_cursor(last.deleted_at, last.id) if more and last else ""
        return entries, next_cursor

    async def trash_retention_days(self, ctx: CallerContext) -> int:
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            value = await identity.config_value(conn, "trash_retention_days")
        return int(value or self._settings.trash_retention_days)

    async def list_conflicts(
        self, ctx: CallerContext, status: str, conflict_type: str, item_id: str, limit: int, cursor: str
    ) -> tuple[list[conflicts.ConflictRow], str]:
        """A page of the conflicts whose two memories the caller may read, newest first."""
        if status:
            validation.validate_choice(status, ConflictStatus, "status")
        if conflict_type:
            validation.validate_choice(conflict_type, ConflictType, "type")
        if item_id:
            validation.require_uuid(item_id, "item_id")
        _check_limit(limit)
        after = _decode_cursor(cursor) if cursor else None
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            rows = await conflicts.listing(
                conn,
                ctx.principal_id,
                status=status or None,
                conflict_type=conflict_type or None,
                item_id=item_id or None,
                limit=limit + 1,
                after=after,
            )
        page = rows[:limit]
        more = len(rows) > limit
        return page, _encode_cursor(page[-1].created_at, page[-1].id) if more and page else ""

    async def expiry_candidates(
        self, ctx: CallerContext, within_days: int, limit: int, workspace_id: str
    ) -> list[MemoryItem]:
        """Live items the caller can see whose time to live ends within ``within_days`` (expired included)."""
        if not 1 <= within_days <= MAX_WITHIN_DAYS:
            raise ValidationFailed(f"within_days must be 1–{MAX_WITHIN_DAYS}, got {within_days}", field="within_days")
        _check_limit(limit)
        if workspace_id:
            validation.require_uuid(workspace_id, "workspace_id")
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            until = await clock.days_from_now(conn, within_days)
            return await items_shown(
                conn, ctx, await items.expiring(conn, ctx.principal_id, until, limit, workspace_id or None)
            )


def _check_limit(limit: int) -> None:
    if not 1 <= limit <= MAX_PAGE:
        raise ValidationFailed(f"limit must be 1–{MAX_PAGE}, got {limit}", field="limit")


def _encode_cursor(at: datetime, entry_id: str) -> str:
    return base64.urlsafe_b64encode(f"{at.isoformat()}|{entry_id}".encode()).decode()


def _decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        at, entry_id = base64.urlsafe_b64decode(cursor.encode()).decode().split("|")
        validation.require_uuid(entry_id, "cursor")
        return datetime.fromisoformat(at), entry_id
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationFailed("cursor is not one this API returned", field="cursor") from exc
