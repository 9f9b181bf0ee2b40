"""Typed links between memories (``memory_edges``) and tunnels between (wing, room) areas."""

from __future__ import annotations

from typing import Any

import asyncpg

from engram.db.items import ITEM_COLUMNS, NOT_EXPIRED, row_to_item, visible_to
from engram.domain.models import Edge, MemoryItem, Tunnel

# Linked by a caller; "supersedes" edges are written by supersession only.


def _plain(row: asyncpg.Record) -> dict[str, Any]:
    return {
        k: (str(v) if k in ("id", "src_id", "dst_id", "created_by") and v is not None else v)
        for k, v in dict(row).items()
    }


async def link(
    conn: asyncpg.Connection, tenant_id: str, src_id: str, dst_id: str, edge_type: str, actor_id: str
) -> tuple[Edge, bool]:
    """The edge (src → dst, type), created unless it exists; the flag says whether it was created."""
    row = await conn.fetchrow(
        """INSERT INTO memory_edges (tenant_id, id, src_id, dst_id, type, created_by)
           VALUES ($1, gen_random_uuid(), $2, $3, $4, $5) ON CONFLICT (tenant_id, src_id, dst_id, type) DO NOTHING
           RETURNING id, src_id, dst_id, type, created_by, created_at""",
        tenant_id,
        src_id,
        dst_id,
        edge_type,
        actor_id,
    )
    if row is not None:
        return Edge(**_plain(row)), True
    row = await conn.fetchrow(
        "SELECT id, src_id, dst_id, type, created_by, created_at FROM memory_edges "
        "WHERE src_id = $1 AND dst_id = $2 AND type = $3",
        src_id,
        dst_id,
        edge_type,
    )
    return Edge(**_plain(row)), False


async def get(conn: asyncpg.Connection, edge_id: str, viewer: str) -> Edge | None:
    """The edge, when ``viewer`` may read both of its ends."""
    row = await conn.fetchrow(
        f"""SELECT e.id, e.src_id, e.dst_id, e.type, e.created_by, e.created_at FROM memory_edges e
            JOIN memory_items s ON s.id = e.src_id JOIN memory_items d ON d.id = e.dst_id
            WHERE e.id = $1 AND {visible_to("$2", "s")} AND {visible_to("$2", "d")}""",
        edge_id,
        viewer,
    )
    return Edge(**_plain(row)) if row else None


async def unlink(conn: asyncpg.Connection, edge_id: str) -> None:
    await conn.execute("DELETE FROM memory_edges WHERE id = $1", edge_id)


async def of_item(conn: asyncpg.Connection, item_id: str, viewer: str) -> list[Edge]:
    """The edges from and to ``item_id`` whose other end ``viewer`` may read."""
    rows = await conn.fetch(
        f"""SELECT e.id, e.src_id, e.dst_id, e.type, e.created_by, e.created_at FROM memory_edges e
            JOIN memory_items o ON o.id = CASE WHEN e.src_id = $1 THEN e.dst_id ELSE e.src_id END
            WHERE (e.src_id = $1 OR e.dst_id = $1) AND {visible_to("$2", "o")}
            ORDER BY e.created_at, e.id""",
        item_id,
        viewer,
    )
    return [Edge(**_plain(r)) for r in rows]


async def neighbours(
    conn: asyncpg.Connection, item_ids: list[str], viewer: str, per_item: int
) -> list[tuple[str, str, MemoryItem]]:
    """For each of ``item_ids``, up to ``per_item`` live linked memories the viewer may read, as
    (from item, edge type, linked item); supersession links are not followed (recall redirects those)."""
    rows = await conn.fetch(
        f"""SELECT * FROM (
                SELECT x.from_id, x.type, {", ".join(f"i.{c.strip()}" for c in ITEM_COLUMNS.split(","))},
                       row_number() OVER (PARTITION BY x.from_id ORDER BY x.created_at) AS n
                FROM (SELECT src_id AS from_id, dst_id AS to_id, type, created_at FROM memory_edges
                          WHERE src_id = ANY($1::uuid[]) AND type <> 'supersedes'
                      UNION ALL
                      SELECT dst_id, src_id, type, created_at FROM memory_edges
                          WHERE dst_id = ANY($1::uuid[]) AND type <> 'supersedes') x
                JOIN memory_items i ON i.id = x.to_id
                WHERE i.invalidated_at IS NULL AND i.superseded_by IS NULL AND {NOT_EXPIRED}
                  AND i.review_status IN ('active', 'proposed') AND {visible_to("$2")}) ranked
            WHERE n <= $3""",
        item_ids,
        viewer,
        per_item,
    )
    return [(str(r["from_id"]), r["type"], row_to_item(r)) for r in rows]


async def add_tunnel(
    conn: asyncpg.Connection, tenant_id: str, from_wing: str, from_room: str, to_wing: str, to_room: str, actor_id: str
) -> tuple[Tunnel, bool]:
    row = await conn.fetchrow(
        """INSERT INTO tunnels (tenant_id, id, from_wing, from_room, to_wing, to_room, created_by)
           VALUES ($1, gen_random_uuid(), $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING
           RETURNING id, from_wing, from_room, to_wing, to_room, created_by, created_at""",
        tenant_id,
        from_wing,
        from_room,
        to_wing,
        to_room,
        actor_id,
    )
    created = row is not None
    if row is None:
        row = await conn.fetchrow(
            "SELECT id, from_wing, from_room, to_wing, to_room, created_by, created_at FROM tunnels "
            "WHERE from_wing = $1 AND from_room = $2 AND to_wing = $3 AND to_room = $4",
            from_wing,
            from_room,
            to_wing,
            to_room,
        )
    return Tunnel(**_plain(row)), created


async def tunnels(conn: asyncpg.Connection) -> list[Tunnel]:
    rows = await conn.fetch(
        "SELECT id, from_wing, from_room, to_wing, to_room, created_by, created_at FROM tunnels ORDER BY created_at, id"
    )
    return [Tunnel(**_plain(r)) for r in rows]


async def remove_tunnel(conn: asyncpg.Connection, tunnel_id: str) -> bool:
    status: str = await conn.execute("DELETE FROM tunnels WHERE id = $1", tunnel_id)
    return status.endswith(" 1")


async def through_tunnels(conn: asyncpg.Connection, areas: list[tuple[str, str]]) -> list[tuple[str, str, str, str]]:
    """For (wing, room) areas, the areas tunnels lead to, both ways, as (from wing, from room, to wing, to room);
    a tunnel with an empty room covers the whole wing."""
    if not areas:
        return []
    rows = await conn.fetch(
        """WITH a(wing, room) AS (SELECT * FROM unnest($1::text[], $2::text[]))
           SELECT DISTINCT a.wing AS fw, a.room AS fr, t.to_wing AS tw, t.to_room AS tr FROM a
               JOIN tunnels t ON t.from_wing = a.wing AND (t.from_room = '' OR t.from_room = a.room)
           UNION
           SELECT DISTINCT a.wing, a.room, t.from_wing, t.from_room FROM a
               JOIN tunnels t ON t.to_wing = a.wing AND (t.to_room = '' OR t.to_room = a.room)""",
        [w for w, _ in areas],
        [r for _, r in areas],
    )
    return [(r["fw"], r["fr"], r["tw"], r["tr"]) for r in rows]
