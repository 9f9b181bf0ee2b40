"""The trash: a destroyed item's full snapshot, restorable until the sweep empties it.

Moving to the trash and restoring each run inside the caller's transaction, so the item, its snapshot, its
audit row and its event commit together or not at all.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from engram.db.embeddings import CONTENT_SUFFIX
from engram.db.items import ITEM_COLUMNS, row_to_item, visible_to
from engram.db.pool import savepoint
from engram.domain.models import MemoryItem
from engram.errors import Conflict

ENTRY_COLUMNS = (
    "t.id, t.item_id, t.workspace_id, t.principal_id, t.visibility, t.kind, t.review_status, "
    "t.invalidated, t.reason, t.deleted_by, t.deleted_at, t.snapshot->'item'->>'content' AS content"
)


@dataclass(frozen=True)
class Entry:
    id: str
    item_id: str
    workspace_id: str
    principal_id: str
    visibility: str
    kind: str
    review_status: str
    invalidated: bool
    reason: str
    deleted_by: str | None
    deleted_at: datetime
    content: str


def _entry(row: asyncpg.Record) -> Entry:
    values: dict[str, Any] = {k: (str(v) if isinstance(v, uuid.UUID) else v) for k, v in dict(row).items()}
    return Entry(**values)


async def move(conn: asyncpg.Connection, item_id: str, reason: str, actor_id: str | None) -> str:
    """Snapshot the item with everything hanging off it, delete it, and return the trash entry's id.

    The items it had replaced keep pointing at it in the snapshot only (their ``superseded_by`` is cleared,
    and set again on restore): they stay superseded, and recall drops a chain that ends in nothing."""
    item = await conn.fetchrow("SELECT to_jsonb(i) - 'content_tsv' AS row FROM memory_items i WHERE id = $1", item_id)
    if item is None:
        raise LookupError(item_id)
    snapshot = {
        "item": json.loads(item["row"]),
        "edges": await _rows(conn, "memory_edges", "src_id = $1 OR dst_id = $1", item_id),
        "conflicts": await _rows(conn, "conflicts", "item_a = $1 OR item_b = $1", item_id),
        "stages": await _rows(conn, "item_stages", "item_id = $1", item_id),
        "receipts": await _rows(conn, "classification_receipts", "item_id = $1", item_id),
        "embeddings": json.loads(
            await conn.fetchval(
                "SELECT coalesce(jsonb_agg(jsonb_build_object('profile', profile, 'embedding', embedding::text, "
                "'created_at', created_at, 'context_item_id', context_item_id)), '[]') "
                "FROM memory_embeddings WHERE item_id = $1",
                item_id,
            )
        ),
        "predecessors": [
            str(r["id"])
            for r in await conn.fetch(
                "UPDATE memory_items SET superseded_by = NULL WHERE superseded_by = $1 RETURNING id", item_id
            )
        ],
    }
    await conn.execute("DELETE FROM memory_items WHERE id = $1", item_id)
    row = snapshot["item"]
    return str(
        await conn.fetchval(
            """INSERT INTO trash (tenant_id, id, item_id, workspace_id, principal_id, visibility, kind, review_status,
                              invalidated, reason, deleted_by, snapshot)
           VALUES ($1, gen_random_uuid(), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb) RETURNING id""",
            row["tenant_id"],
            item_id,
            row["workspace_id"],
            row["principal_id"],
            row["visibility"],
            row["kind"],
            row["review_status"],
            row["invalidated_at"] is not None,
            reason,
            actor_id,
            json.dumps(snapshot),
        )
    )


async def _rows(conn: asyncpg.Connection, table: str, where: str, item_id: str) -> list[dict[str, Any]]:
    value = await conn.fetchval(f"SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM {table} x WHERE {where}", item_id)
    return json.loads(value)  # type: ignore[no-any-return]


async def get(conn: asyncpg.Connection, entry_id: str, viewer: str, *, for_update: bool = False) -> Entry | None:
    lock = " FOR UPDATE OF t" if for_update else ""
    row = await conn.fetchrow(
        f"SELECT {ENTRY_COLUMNS} FROM trash t WHERE t.id = $1 AND {visible_to('$2', 't')}{lock}", entry_id, viewer
    )
    return _entry(row) if row else None


async def holds(conn: asyncpg.Connection, item_id: str, viewer: str) -> bool:
    """Whether a trash entry the viewer may see holds ``item_id``."""
    return bool(
        await conn.fetchval(
            f"SELECT true FROM trash t WHERE t.item_id = $1 AND {visible_to('$2', 't')}", item_id, viewer
        )
    )


async def listing(
    conn: asyncpg.Connection, viewer: str, limit: int, after: tuple[datetime, str] | None = None
) -> list[Entry]:
    """Newest first; ``after`` is the (deleted_at, id) of the last entry of the previous page."""
    if after is None:
        rows = await conn.fetch(
            f"SELECT {ENTRY_COLUMNS} FROM trash t WHERE {visible_to('$1', 't')} "
            "ORDER BY t.deleted_at DESC, t.id DESC LIMIT $2",
            viewer,
            limit,
        )
    else:
        rows = await conn.fetch(
            f"SELECT {ENTRY_COLUMNS} FROM trash t WHERE {visible_to('$1', 't')} AND (t.deleted_at, t.id) < ($3, $4) "
            "ORDER BY t.deleted_at DESC, t.id DESC LIMIT $2",
            viewer,
            limit,
            after[0],
            after[1],
        )
    return [_entry(r) for r in rows]


async def restore(conn: asyncpg.Connection, entry_id: str, *, clear_expiry: bool) -> tuple[MemoryItem, dict[str, int]]:
    """Bring the item back as it was (state included), with its embeddings, stages, and the edges and
    conflicts whose other end still exists; re-point the items it had replaced. Removes the entry.
    Returns the item and what came back with it; ``Conflict`` (``duplicate_live_item``) when it would duplicate
    a live item."""
    snapshot = json.loads(await conn.fetchval("SELECT snapshot FROM trash WHERE id = $1", entry_id))
    row = dict(snapshot["item"])
    if row.get("superseded_by") and not await _exists(conn, row["superseded_by"]):
        row["superseded_by"] = None  # its successor is gone too; the item stays superseded, the chain ends here
    if clear_expiry:
        row["expires_at"] = None
    columns = [c for c in await _insertable_columns(conn, "memory_items") if c in row]
    names = ", ".join(columns)
    try:
        async with savepoint(conn):
            item_row = await conn.fetchrow(
                f"INSERT INTO memory_items ({names}) SELECT {names} FROM jsonb_populate_record(NULL::memory_items, "
                f"$1::jsonb) RETURNING {ITEM_COLUMNS}",
                json.dumps(row),
            )
    except asyncpg.UniqueViolationError as exc:
        raise Conflict(
            "a live item with the same content exists; archive or delete it first", code="duplicate_live_item"
        ) from exc
    item_id = row["id"]
    restored = {"embeddings": 0, "edges": 0, "conflicts": 0, "predecessors": 0}
    # A vector built with a predecessor (docs/adr/0009-context-passages.md) comes back only while that predecessor
    # is live: one deleted meanwhile was not there to be re-embedded from, and its text must not stay searchable.
    # The rows of the profile that lost it are left out (the item's own vector too), so the embedder embeds the
    # item again on memory.restored.
    gone = {
        str(v["profile"])
        for v in snapshot["embeddings"]
        if v.get("context_item_id") and not await _exists(conn, str(v["context_item_id"]))
    }
    for vector in snapshot["embeddings"]:
        if str(vector["profile"]).split(CONTENT_SUFFIX)[0] in gone:
            continue
        await conn.execute(
            "INSERT INTO memory_embeddings (tenant_id, item_id, profile, embedding, created_at, context_item_id) "
            "VALUES ($1, $2, $3, $4::text::vector, $5::text::timestamptz, $6::uuid)",
            row["tenant_id"],
            item_id,
            vector["profile"],
            vector["embedding"],
            vector["created_at"],
            vector.get("context_item_id"),
        )
        restored["embeddings"] += 1
    await _put_back(conn, "item_stages", snapshot["stages"], "true")
    await _put_back(conn, "classification_receipts", snapshot.get("receipts", []), "true")
    restored["edges"] = await _put_back(conn, "memory_edges", snapshot["edges"], _both_ends("src_id", "dst_id"))
    restored["conflicts"] = await _put_back(conn, "conflicts", snapshot["conflicts"], _both_ends("item_a", "item_b"))
    restored["predecessors"] = len(
        await conn.fetch(
            "UPDATE memory_items SET superseded_by = $1 WHERE id = ANY($2::uuid[]) AND superseded_by IS NULL "
            "AND review_status = 'superseded' RETURNING id",
            item_id,
            snapshot["predecessors"],
        )
    )
    await conn.execute("DELETE FROM trash WHERE id = $1", entry_id)
    return row_to_item(item_row), restored


def _both_ends(a: str, b: str) -> str:
    return (
        f"EXISTS (SELECT 1 FROM memory_items m WHERE m.id = r.{a}) "
        f"AND EXISTS (SELECT 1 FROM memory_items m WHERE m.id = r.{b})"
    )


async def _put_back(conn: asyncpg.Connection, table: str, rows: list[dict[str, Any]], keep: str) -> int:
    if not rows:
        return 0
    names = ", ".join(await _insertable_columns(conn, table))
    result = await conn.execute(
        f"INSERT INTO {table} ({names}) SELECT {names} FROM jsonb_populate_recordset(NULL::{table}, $1::jsonb) r "
        f"WHERE {keep} ON CONFLICT DO NOTHING",
        json.dumps(rows),
    )
    return int(result.split()[-1])


async def _insertable_columns(conn: asyncpg.Connection, table: str) -> list[str]:
    rows = await conn.fetch(
        "SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped "
        "AND attgenerated = '' AND attidentity = '' ORDER BY attnum",
        table,
    )
    return [r["attname"] for r in rows]


async def _exists(conn: asyncpg.Connection, item_id: str) -> bool:
    return bool(await conn.fetchval("SELECT true FROM memory_items WHERE id = $1", item_id))


async def purge(conn: asyncpg.Connection, older_than_days: int, limit: int) -> int:
    """Empty the entries deleted more than ``older_than_days`` ago (at most ``limit``); returns how many."""
    result = await conn.execute(
        "DELETE FROM trash WHERE id IN (SELECT id FROM trash WHERE deleted_at < now() - make_interval(days => $1) "
        "ORDER BY deleted_at LIMIT $2 FOR UPDATE SKIP LOCKED)",
        older_than_days,
        limit,
    )
    return int(result.split()[-1])


async def expired_items(conn: asyncpg.Connection, limit: int) -> list[MemoryItem]:
    """Items whose time is up, locked for the sweep (rows another sweeper holds are skipped)."""
    rows = await conn.fetch(
        f"SELECT {ITEM_COLUMNS} FROM memory_items WHERE expires_at IS NOT NULL AND expires_at <= now() "
        "ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED",
        limit,
    )
    return [row_to_item(r) for r in rows]
