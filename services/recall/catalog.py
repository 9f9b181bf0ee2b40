"""The caller's items browsed in pages (``ListItems``) and counted (``GetStats``), both limited to what it may
read in its own tenant."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime

import asyncpg

from engram.db import kinds, listing
from engram.db.pool import tenant_tx
from engram.domain import validation, validity
from engram.domain.models import CallerContext, MemoryItem
from engram.domain.values import ItemSort, ReviewStatus
from engram.errors import ValidationFailed
from services.recall.shown import items_shown

MAX_PAGE = 500


class Catalog:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def list_items(
        self, ctx: CallerContext, criteria: listing.ItemCriteria, sort: str, limit: int, cursor: str
    ) -> tuple[list[MemoryItem], str]:
        """A page of the items matching ``criteria``, in ``sort`` order (newest first when empty), and the cursor
        of the next page ("" after the last). Each criterion is checked first, naming its query parameter."""
        validation.validate_choice(sort or ItemSort.NEWEST, ItemSort, "sort")
        order = ItemSort(sort or ItemSort.NEWEST)
        for status in criteria.review_statuses:
            validation.validate_choice(status, ReviewStatus, "review_status")
        for value, name in ((criteria.workspace_id, "workspace_id"), (criteria.author_id, "author")):
            if value:
                validation.require_uuid(value, name)
        validity.check_range(criteria.valid_start, criteria.valid_end, "valid_end")
        if not 1 <= limit <= MAX_PAGE:
            raise ValidationFailed(f"limit must be 1–{MAX_PAGE}, got {limit}", field="limit")
        after = decode_cursor(cursor, order) if cursor else None
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            if criteria.kinds:
                known = await kinds.known_kind_names(conn)
                unknown = [k for k in criteria.kinds if k not in known]
                if unknown:
                    raise ValidationFailed(f"unknown kinds {unknown}; known kinds: {', '.join(known)}", field="kind")
            found = await listing.page(conn, ctx.principal_id, criteria, order, limit + 1, after)
            more = len(found) > limit
            page = await items_shown(conn, ctx, found[:limit])
        return page, encode_cursor(order, listing.sort_key(page[-1], order)) if more and page else ""

    async def stats(self, ctx: CallerContext) -> listing.Stats:
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            return await listing.stats(conn, ctx.principal_id)


def encode_cursor(sort: ItemSort, key: listing.Key) -> str:
    """The order's name and the last item's key values, so a cursor only resumes the order it came from."""
    values = [v.isoformat() if isinstance(v, datetime) else v for v in key]
    return base64.urlsafe_b64encode(json.dumps({"sort": sort.value, "after": values}).encode()).decode()


def decode_cursor(cursor: str, sort: ItemSort) -> listing.Key:
    """The key a cursor of ``sort`` resumes after; 422 (``field: cursor``) for anything this API did not issue
    for that order: another listing's cursor, another order's, or garbage."""
    columns, _ = listing.SORT_KEYS[sort]
    try:
        body = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        values = body["after"] if isinstance(body, dict) and body.get("sort") == sort.value else None
        if not isinstance(values, list) or len(values) != len(columns):
            raise ValueError("not a cursor of this order")
        key: list[float | datetime | str] = []
        for value, (_, sql_type) in zip(values, columns, strict=True):
            if sql_type == "timestamptz":
                at = datetime.fromisoformat(str(value))
                if at.tzinfo is None:
                    raise ValueError("a cursor time carries its offset")
                key.append(at)
            elif sql_type == "uuid":
                validation.require_uuid(str(value), "cursor")
                key.append(str(value))
            elif isinstance(value, int | float) and not isinstance(value, bool):
                key.append(float(value))
            else:
                raise ValueError("not a number")
        return tuple(key)
    except (ValueError, TypeError, KeyError, UnicodeDecodeError, binascii.Error) as exc:
        raise ValidationFailed("cursor is not one this API returned for this sort", field="cursor") from exc
