"""Conflicts between two memories: opened by a detector, resolved by a reviewer's decision."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg


@dataclass(frozen=True)
class Resolved:
    id: str
    item_a: str
    item_b: str
    type: str


async def resolve_open(conn: asyncpg.Connection, item_id: str, resolution: str, resolver_id: str,
                       reason: str | None, *, other: str | None = None) -> list[Resolved]:
    """Resolve every open conflict of ``item_id`` (only the one with ``other`` when given); returns them."""
    rows = await conn.fetch(
        """UPDATE conflicts SET status = 'resolved', resolution = $2, resolver_id = $3, reason = $4,
                                resolved_at = now()
           WHERE status = 'open' AND (item_a = $1 OR item_b = $1)
             AND ($5::uuid IS NULL OR item_a = $5 OR item_b = $5)
           RETURNING id, item_a, item_b, type""",
        item_id, resolution, resolver_id, reason, other)
    return [Resolved(str(r["id"]), str(r["item_a"]), str(r["item_b"]), r["type"]) for r in rows]
