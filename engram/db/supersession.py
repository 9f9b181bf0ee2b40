"""Following supersession chains: the terminal successor of a replaced memory."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from engram.db import items
from engram.domain.models import MemoryItem

MAX_HOPS = 5
LIVE_STATES = ("active", "proposed", "disputed")


async def terminal(conn: asyncpg.Connection, item: MemoryItem, viewer: str) -> MemoryItem | None:
    """The live end of ``item``'s chain that ``viewer`` may see, within five hops; None when the chain ends
    in an invalidated (or otherwise dead) item, is hidden from the viewer, is too long, or loops."""
    visited = {item.id}
    current = item
    for _ in range(MAX_HOPS):
        if current.superseded_by is None:
            break
        successor = await items.get(conn, str(current.superseded_by), viewer)
        if successor is None or successor.id in visited:
            return None
        visited.add(successor.id)
        current = successor
    if current.superseded_by is not None or current is item:
        return None
    return current if _live(current) else None


def _live(item: MemoryItem) -> bool:
    expired = item.expires_at is not None and item.expires_at <= datetime.now(UTC)
    return item.invalidated_at is None and not expired and item.review_status in LIVE_STATES
