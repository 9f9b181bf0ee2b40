"""Memory items: insert, dedup lookup, reads and the lifecycle updates (review, supersession, invalidation,
verification). Their audit rows are in ``audit``, their pipeline stages in ``stages``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from engram.db.pool import savepoint
from engram.domain.models import MemoryItem
from engram.domain.validation import is_uuid
from engram.errors import Conflict

ITEM_COLUMNS = (
    "tenant_id, id, workspace_id, principal_id, content, content_hash, kind, subject, wing, room, tags, "
    "importance, pinned, visibility, review_status, authority, source_type, source_uri, source_session, "
    "source_trust, memory_confidence, human_verified, valid_from, valid_to, created_at, superseded_by, "
    "invalidated_at, expires_at, recall_count, external_id, metadata, kind_explicit, taxonomy_confidence, retention, "
    "retention_confidence, sensitivity, classified_at, recalls_since_useful"
)

NOT_EXPIRED = "(i.expires_at IS NULL OR i.expires_at > now())"
# The calling tenant, read once per statement (an InitPlan). ``engram_current_tenant()`` is STABLE SQL, inlined
# as a setting lookup and a cast: compared row by row it is evaluated for every row (bench/visibility_filter.py).
TENANT = "(SELECT engram_current_tenant())"


@dataclass
class NewItem:
    id: UUID
    tenant_id: str
    workspace_id: str
    principal_id: str
    content: str
    content_hash: bytes
    kind: str
    importance: float
    review_status: str
    authority: int
    source_type: str
    source_trust: float
    subject: str | None
    wing: str | None
    room: str | None
    tags: list[str]
    pinned: bool
    visibility: str
    source_uri: str | None
    source_session: str | None
    valid_from: datetime | None
    valid_to: datetime | None
    expires_at: datetime | None
    external_id: str | None
    metadata: dict[str, Any]
    kind_explicit: bool = True
    index_context: str = ""


# Whether the calling tenant accepts other tenants' public memories (tenant config ``recall.accept_public``).
ACCEPTS_PUBLIC = (
    "EXISTS (SELECT 1 FROM tenant_config c WHERE c.tenant_id = engram_current_tenant()"
    " AND c.config -> 'recall' -> 'accept_public' = 'true'::jsonb)"
)


def visible_to(viewer_param: str, alias: str = "i") -> str:
    """SQL that keeps the items the principal in ``viewer_param`` may read. RLS bounds the rows to the tenant's
    own and the public items of publishing tenants; of those: private → its author; workspace → members of its
    workspace; tenant and public → any principal of the tenant; another tenant's public item → only when the
    calling tenant accepts public memories. The tenant is read once per statement (an InitPlan), not per row."""
    return (
        f"(({alias}.visibility IN ('tenant', 'public')"
        f" OR ({alias}.visibility = 'private' AND {alias}.principal_id = {viewer_param}::uuid)"
        f" OR ({alias}.visibility = 'workspace' AND EXISTS (SELECT 1 FROM workspace_members m"
        f" WHERE m.workspace_id = {alias}.workspace_id AND m.principal_id = {viewer_param}::uuid)))"
        f" AND ({alias}.tenant_id = {TENANT}"
        f" OR ({alias}.visibility = 'public' AND {ACCEPTS_PUBLIC})))"
    )


def row_to_item(row: asyncpg.Record) -> MemoryItem:
    item = MemoryItem.from_row(row)
    if isinstance(item.metadata, str):
        item.metadata = json.loads(item.metadata)
    return item


async def default_workspace(conn: asyncpg.Connection) -> str | None:
    value = await conn.fetchval("SELECT id FROM workspaces WHERE name = 'default'")
    return str(value) if value else None


INSERT_ITEM = f"""INSERT INTO memory_items (tenant_id, id, workspace_id, principal_id, content, content_hash, kind,
                importance, review_status, authority, source_type, source_trust, subject, wing, room, tags,
                pinned, visibility, source_uri, source_session, valid_from, valid_to, expires_at, external_id,
                metadata, kind_explicit, index_context)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
                    $21, $22, $23, $24, $25::jsonb, $26, $27)
            ON CONFLICT (tenant_id, workspace_id, principal_id, content_hash)
                WHERE review_status IN ('proposed', 'active', 'disputed') AND invalidated_at IS NULL
            DO NOTHING
            RETURNING {ITEM_COLUMNS}"""
"""The insert of a new item ($1–$27: ``insert_args``), nothing when a live item holds the same content."""


def insert_args(item: NewItem) -> list[Any]:
    """``INSERT_ITEM``'s parameters."""
    return [
        item.tenant_id,
        item.id,
        item.workspace_id,
        item.principal_id,
        item.content,
        item.content_hash,
        item.kind,
        item.importance,
        item.review_status,
        item.authority,
        item.source_type,
        item.source_trust,
        item.subject,
        item.wing,
        item.room,
        item.tags,
        item.pinned,
        item.visibility,
        item.source_uri,
        item.source_session,
        item.valid_from,
        item.valid_to,
        item.expires_at,
        item.external_id,
        json.dumps(item.metadata),
        item.kind_explicit,
        item.index_context,
    ]


async def insert(conn: asyncpg.Connection, item: NewItem) -> MemoryItem | None:
    """Insert unless a live item with the same canonical content exists (then None)."""
    row = await conn.fetchrow(INSERT_ITEM, *insert_args(item))
    return row_to_item(row) if row else None


async def find_live_duplicate(
    conn: asyncpg.Connection, workspace_id: str, principal_id: str, content_hash: bytes
) -> MemoryItem | None:
    row = await conn.fetchrow(
        f"""SELECT {ITEM_COLUMNS} FROM memory_items
            WHERE workspace_id = $1 AND principal_id = $2 AND content_hash = $3
              AND review_status IN ('proposed', 'active', 'disputed') AND invalidated_at IS NULL""",
        workspace_id,
        principal_id,
        content_hash,
    )
    return row_to_item(row) if row else None


async def get(
    conn: asyncpg.Connection, item_id: str, viewer: str | None = None, *, for_update: bool = False
) -> MemoryItem | None:
    """The item, if it exists and ``viewer`` may read it (no viewer: pipeline consumers, which see all).
    ``for_update`` locks the row for the rest of the transaction."""
    lock = " FOR UPDATE OF i" if for_update else ""
    if viewer is None:
        row = await conn.fetchrow(f"SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.id = $1{lock}", item_id)
    else:
        row = await conn.fetchrow(
            f"SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.id = $1 AND {visible_to('$2')}{lock}", item_id, viewer
        )
    return row_to_item(row) if row else None


async def set_review_status(conn: asyncpg.Connection, item_id: str, status: str) -> MemoryItem:
    """``Conflict`` (``duplicate_live_item``) when the item would come back to life beside a live duplicate;
    the caller's transaction stays usable (the change runs in a savepoint)."""
    try:
        async with savepoint(conn):
            row = await conn.fetchrow(
                f"UPDATE memory_items SET review_status = $2 WHERE id = $1 RETURNING {ITEM_COLUMNS}", item_id, status
            )
    except asyncpg.UniqueViolationError as exc:
        raise Conflict(
            "a live item with the same content exists; archive or supersede it first", code="duplicate_live_item"
        ) from exc
    return row_to_item(row)


async def live_singleton(
    conn: asyncpg.Connection, workspace_id: str, subject: str, kind: str, viewer: str, exclude: str | None = None
) -> MemoryItem | None:
    """The live item holding a singleton slot (workspace, subject, kind) that ``viewer`` can see, locked
    (``exclude``: an item that does not count, such as the one about to take the slot)."""
    row = await conn.fetchrow(
        f"""SELECT {ITEM_COLUMNS} FROM memory_items i
            WHERE i.workspace_id = $1 AND i.subject = $2 AND i.kind = $3 AND i.invalidated_at IS NULL
              AND ($5::uuid IS NULL OR i.id <> $5)
              AND i.superseded_by IS NULL AND i.review_status IN ('active', 'disputed') AND {NOT_EXPIRED}
              AND {visible_to("$4")}
            ORDER BY i.created_at DESC LIMIT 1 FOR UPDATE OF i""",
        workspace_id,
        subject,
        kind,
        viewer,
        exclude,
    )
    return row_to_item(row) if row else None


@dataclass(frozen=True)
class Similar:
    id: str
    similarity: float
    content: str


# a live item: neither invalidated nor superseded, in a live review state
LIVE = "invalidated_at IS NULL AND superseded_by IS NULL AND review_status IN ('proposed', 'active', 'disputed')"


SIMILARITY_PREFIX = 1000  # characters of each text possible_supersedes compares (MSRP's sentences are shorter)


async def similar_live(
    conn: asyncpg.Connection,
    content: str,
    kind: str,
    viewer: str,
    exclude: list[str],
    threshold: float,
    window: int,
    limit: int = 5,
) -> list[Similar]:
    """Of the ``window`` most recent live items of ``kind`` in the caller's tenant, those the viewer can see whose
    text is trigram-similar to ``content`` (at least ``threshold``), most similar first. The window is read
    newest first from ``memory_items_recent_live`` (migration 025), so the cost does not grow with the store.
    Both texts are compared by their first ``SIMILARITY_PREFIX`` characters: ``similarity()`` costs time in
    proportion to the texts' length (about 15 ms for two 16 KB texts), and the window holds up to hundreds."""
    content = content[:SIMILARITY_PREFIX]
    rows = await conn.fetch(
        f"""SELECT id, content, s FROM (
                SELECT i.id, i.content, similarity(left(i.content, $8), $1) AS s FROM (
                    SELECT id, content, tenant_id, workspace_id, principal_id, visibility, expires_at
                    FROM memory_items
                    WHERE tenant_id = engram_current_tenant() AND kind = $2 AND {LIVE}
                    ORDER BY created_at DESC LIMIT $5) i
                WHERE NOT (i.id = ANY($3::uuid[])) AND {NOT_EXPIRED} AND {visible_to("$4")}) scored
            WHERE s >= $6 ORDER BY s DESC LIMIT $7""",
        content,
        kind,
        exclude,
        viewer,
        window,
        threshold,
        limit,
        SIMILARITY_PREFIX,
    )
    return [Similar(str(r["id"]), round(float(r["s"]), 4), r["content"]) for r in rows]


def window_sql(kind: str, size: str) -> str:
    """The statement ``live_window`` sends, its kind and size given as the parameters named (``$1``…): for a
    statement that reads the window beside other values (``engram.db.write_context``)."""
    return f"""SELECT coalesce(string_agg(uuid_send(id), ''::bytea ORDER BY created_at DESC), ''::bytea) FROM (
                   SELECT id, created_at FROM memory_items
                   WHERE tenant_id = engram_current_tenant() AND kind = {kind} AND {LIVE}
                   ORDER BY created_at DESC LIMIT {size}) w"""


async def live_window(conn: asyncpg.Connection, kind: str, window: int) -> bytes:
    """The ids of the ``window`` most recent live items of ``kind`` in the caller's tenant, newest first: the
    rows ``similar_live`` compares, read from ``memory_items_recent_live`` alone (no text, no similarity). One
    ``bytea`` of their 16 bytes each (``UUID.bytes``), so that the caller can look them up without a Python
    object per id."""
    return bytes(await conn.fetchval(window_sql("$1", "$2"), kind, window))


async def openings(conn: asyncpg.Connection, ids: list[UUID]) -> list[tuple[UUID, str]]:
    """``(id, first SIMILARITY_PREFIX characters of the content)`` of the given items that exist."""
    rows = await conn.fetch(
        "SELECT id, left(content, $2) AS opening FROM memory_items WHERE id = ANY($1::uuid[])", ids, SIMILARITY_PREFIX
    )
    return [(r["id"], r["opening"]) for r in rows]


@dataclass(frozen=True)
class Among:
    """``similar_among``'s question: which of ``ids`` (candidates ingest chose from the window) are still live and
    of ``kind`` in the caller's tenant, readable by ``viewer``, not expired, not in ``exclude``, with pg_trgm
    ``similarity`` of their first ``SIMILARITY_PREFIX`` characters with ``content``'s of at least ``threshold``."""

    content: str
    kind: str
    viewer: str
    ids: list[UUID]
    exclude: list[str]
    threshold: float
    limit: int = 5

    def args(self) -> list[object]:
        """The statement's parameters, in the order of ``among_sql``'s."""
        return [
            self.content[:SIMILARITY_PREFIX],
            self.ids,
            self.kind,
            self.exclude,
            self.viewer,
            self.threshold,
            self.limit,
            SIMILARITY_PREFIX,
        ]


def among_sql(first: int) -> str:
    """``similar_among``'s statement with its eight parameters numbered from ``$first`` (``Among.args``' order).
    The scores are computed in a subquery PostgreSQL may not flatten (``OFFSET 0``): flattened, ``similarity()``
    ran twice per row, once in the filter on it and once for the output."""
    p = [f"${first + n}" for n in range(8)]
    return f"""SELECT id, content, s FROM (
                   SELECT i.id, i.content, similarity(left(i.content, {p[7]}), {p[0]}) AS s FROM memory_items i
                   WHERE i.id = ANY({p[1]}::uuid[]) AND i.tenant_id = engram_current_tenant() AND i.kind = {p[2]}
                     AND {LIVE} AND NOT (i.id = ANY({p[3]}::uuid[])) AND {NOT_EXPIRED} AND {visible_to(p[4])}
                   OFFSET 0) scored
               WHERE s >= {p[5]} ORDER BY s DESC, id LIMIT {p[6]}"""


def similar_rows(ids: list[UUID] | None, contents: list[str] | None, scores: list[float] | None) -> list[Similar]:
    """``Similar`` answers from the columns of an ``among_sql`` result (parallel lists; None for none)."""
    return [
        Similar(str(i), round(float(s), 4), c) for i, c, s in zip(ids or [], contents or [], scores or [], strict=True)
    ]


async def similar_among(conn: asyncpg.Connection, among: Among) -> list[Similar]:
    """``similar_live``'s answer restricted to ``among.ids`` (see ``Among``), most similar first."""
    if not among.ids:
        return []
    rows = await conn.fetch(among_sql(1), *among.args())
    return similar_rows([r["id"] for r in rows], [r["content"] for r in rows], [r["s"] for r in rows])


async def trigram_words_are_unicode(conn: asyncpg.Connection) -> bool:
    """Whether pg_trgm counts non-ASCII letters as word characters (the database's LC_CTYPE is not ``C``)."""
    return bool(await conn.fetchval("SELECT show_trgm('é') <> '{}'::text[]"))


async def supersede(conn: asyncpg.Connection, old_id: str, new_id: str, actor_id: str | None) -> None:
    """Point ``old_id`` at its successor and record the typed link (new supersedes old)."""
    await conn.execute(
        "UPDATE memory_items SET superseded_by = $2, review_status = 'superseded' WHERE id = $1", old_id, new_id
    )
    await conn.execute(
        """INSERT INTO memory_edges (tenant_id, id, src_id, dst_id, type, created_by)
           SELECT tenant_id, gen_random_uuid(), $2, $1, 'supersedes', $3 FROM memory_items WHERE id = $1
           ON CONFLICT DO NOTHING""",
        old_id,
        new_id,
        actor_id,
    )


async def invalidate(conn: asyncpg.Connection, item_id: str, reason: str) -> MemoryItem:
    row = await conn.fetchrow(
        f"""UPDATE memory_items SET invalidated_at = now(), invalidated_reason = $2 WHERE id = $1
            RETURNING {ITEM_COLUMNS}""",
        item_id,
        reason,
    )
    return row_to_item(row)


async def set_verified(conn: asyncpg.Connection, item_id: str, verifier: str) -> MemoryItem:
    row = await conn.fetchrow(
        f"""UPDATE memory_items SET human_verified = true, human_verified_by = $2, human_verified_at = now()
            WHERE id = $1 RETURNING {ITEM_COLUMNS}""",
        item_id,
        verifier,
    )
    return row_to_item(row)


async def matching(
    conn: asyncpg.Connection,
    viewer: str,
    limit: int,
    *,
    kinds: list[str],
    tags: list[str],
    workspace_id: str | None,
    wing: str | None,
    room: str | None,
    review_statuses: list[str],
    author_id: str | None,
    created_before: datetime | None,
    created_after: datetime | None,
) -> list[MemoryItem]:
    """Items the viewer can see that match every given criterion (oldest first), locked for a bulk change."""
    rows = await conn.fetch(
        f"""SELECT {ITEM_COLUMNS} FROM memory_items i WHERE {visible_to("$1")}
              AND (cardinality($2::text[]) = 0 OR i.kind = ANY($2)) AND i.tags @> $3::text[]
              AND ($4::uuid IS NULL OR i.workspace_id = $4) AND ($5::text IS NULL OR i.wing = $5)
              AND ($6::text IS NULL OR i.room = $6) AND (cardinality($7::text[]) = 0 OR i.review_status = ANY($7))
              AND ($8::uuid IS NULL OR i.principal_id = $8) AND ($9::timestamptz IS NULL OR i.created_at < $9)
              AND ($10::timestamptz IS NULL OR i.created_at >= $10)
            ORDER BY i.created_at, i.id LIMIT $11 FOR UPDATE OF i""",
        viewer,
        kinds,
        tags,
        workspace_id,
        wing,
        room,
        review_statuses,
        author_id,
        created_before,
        created_after,
        limit,
    )
    return [row_to_item(r) for r in rows]


async def expiring(
    conn: asyncpg.Connection, viewer: str, until: datetime, limit: int, workspace_id: str | None = None
) -> list[MemoryItem]:
    """Live items the viewer can see whose time to live ends by ``until``, soonest first."""
    rows = await conn.fetch(
        f"""SELECT {ITEM_COLUMNS} FROM memory_items i
            WHERE i.expires_at IS NOT NULL AND i.expires_at <= $2 AND i.invalidated_at IS NULL
              AND i.tenant_id = engram_current_tenant()
              AND i.review_status IN ('proposed', 'active', 'disputed') AND ($4::uuid IS NULL OR i.workspace_id = $4)
              AND {visible_to("$1")}
            ORDER BY i.expires_at, i.id LIMIT $3""",
        viewer,
        until,
        limit,
        workspace_id,
    )
    return [row_to_item(r) for r in rows]


async def slot_holder(conn: asyncpg.Connection, workspace_id: str, subject: str, kind: str, exclude: str) -> str | None:
    """The live item holding a singleton slot, whoever may see it (for promotion, a system decision)."""
    value = await conn.fetchval(
        f"""SELECT i.id FROM memory_items i
            WHERE i.workspace_id = $1 AND i.subject = $2 AND i.kind = $3 AND i.id <> $4
              AND i.invalidated_at IS NULL AND i.superseded_by IS NULL AND {NOT_EXPIRED}
              AND i.review_status IN ('active', 'disputed') LIMIT 1""",
        workspace_id,
        subject,
        kind,
        exclude,
    )
    return str(value) if value else None


async def was_disputed(conn: asyncpg.Connection, item_id: str) -> bool:
    return bool(
        await conn.fetchval(
            "SELECT true FROM item_events WHERE item_id = $1 AND action = 'review.dispute' LIMIT 1", item_id
        )
    )


async def workspace_role(conn: asyncpg.Connection, workspace_id: str, principal_id: str) -> str | None:
    value = await conn.fetchval(
        "SELECT role FROM workspace_members WHERE workspace_id = $1 AND principal_id = $2", workspace_id, principal_id
    )
    return str(value) if value else None


async def get_many(conn: asyncpg.Connection, item_ids: list[str]) -> list[MemoryItem]:
    rows = await conn.fetch(f"SELECT {ITEM_COLUMNS} FROM memory_items WHERE id = ANY($1::uuid[])", item_ids)
    return [row_to_item(r) for r in rows]


PATCHABLE_COLUMNS = ("tags", "importance", "pinned", "visibility", "subject", "valid_to", "expires_at", "index_context")


async def patch(conn: asyncpg.Connection, item_id: str, values: dict[str, Any]) -> MemoryItem:
    """Set the given metadata columns of an item (locked by the caller); never its content."""
    unknown = set(values) - set(PATCHABLE_COLUMNS)
    if unknown:
        raise ValueError(f"not patchable: {sorted(unknown)}")
    assignments = ", ".join(f"{column} = ${i}" for i, column in enumerate(values, start=2))
    row = await conn.fetchrow(
        f"UPDATE memory_items SET {assignments} WHERE id = $1 RETURNING {ITEM_COLUMNS}", item_id, *values.values()
    )
    return row_to_item(row)


async def readable_ids(conn: asyncpg.Connection, item_ids: Iterable[str], viewer: str) -> set[str]:
    """Which of ``item_ids`` (any strings; those not UUIDs are ignored) the viewer may read."""
    wanted = sorted({i for i in item_ids if is_uuid(i)})
    if not wanted:
        return set()
    rows = await conn.fetch(
        f"SELECT i.id FROM memory_items i WHERE i.id = ANY($1::uuid[]) AND {visible_to('$2')}", wanted, viewer
    )
    return {str(r["id"]) for r in rows}


async def roles(conn: asyncpg.Connection, principal_id: str) -> dict[str, str]:
    """The principal's role in each workspace of the tenant where it has one."""
    rows = await conn.fetch("SELECT workspace_id, role FROM workspace_members WHERE principal_id = $1", principal_id)
    return {str(r["workspace_id"]): str(r["role"]) for r in rows}
