"""Following supersession chains: the terminal successor of a replaced memory."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from engram.db import items, kinds
from engram.domain import lifecycle
from engram.domain.models import MemoryItem
from engram.domain.values import ReviewStatus

MAX_HOPS = 5


async def terminal(
    conn: asyncpg.Connection, item: MemoryItem, viewer: str, as_of: datetime | None = None
) -> MemoryItem | None:
    """The live end of ``item``'s chain that ``viewer`` may see, within five hops; None when the chain ends
    in an invalidated (or otherwise dead) item, is hidden from the viewer, is too long, or loops.

    With ``as_of`` the chain is followed only through successors recorded by then, so a memory replaced
    later is its own answer (it was the live one at that time)."""
    visited = {item.id}
    current = item
    for _ in range(MAX_HOPS + 1):
        if current.superseded_by is None:
            return current if _live(current, as_of) and await _in_recall(conn, current) else None
        successor = await items.get(conn, str(current.superseded_by), viewer)
        if successor is None or successor.id in visited:
            return None
        if as_of is not None and successor.created_at > as_of:
            return current if _live(current, as_of, superseded_later=True) else None
        visited.add(successor.id)
        current = successor
    return None  # longer than five hops


async def _in_recall(conn: asyncpg.Connection, item: MemoryItem) -> bool:
    """A disputed item stays in recall only when its kind says so (as in the candidate queries)."""
    if item.review_status != ReviewStatus.DISPUTED:
        return True
    kind = await kinds.get_kind(conn, item.kind)
    return kind is not None and kind.stays_in_recall_when_disputed


def _live(item: MemoryItem, as_of: datetime | None, superseded_later: bool = False) -> bool:
    at = as_of or datetime.now(UTC)
    if item.expires_at is not None and item.expires_at <= at:
        return False
    if as_of is None:
        return item.invalidated_at is None and item.review_status in lifecycle.LIVE_STATES
    was_invalidated = item.invalidated_at is not None and item.invalidated_at <= at
    return not was_invalidated and (superseded_later or item.review_status in lifecycle.LIVE_STATES)
