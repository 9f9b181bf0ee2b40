"""Conflicts between two memories: opened by a detector, listed for reviewers, resolved by a decision."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg
import numpy as np

from engram.db.embeddings import content_profile
from engram.db.items import ITEM_COLUMNS, NOT_EXPIRED, row_to_item, visible_to
from engram.domain.models import ConflictRecord, MemoryItem

CONFLICT_COLUMNS = (
    "c.id, c.item_a, c.item_b, c.type, c.detector, c.score, c.rule, c.explanation, c.status, "
    "c.resolution, c.resolver_id, c.reason, c.created_at, c.resolved_at"
)


@dataclass(frozen=True)
class Resolved:
    id: str
    item_a: str
    item_b: str
    type: str


ConflictRow = ConflictRecord  # the name callers outside engram.db knew it by


def _row(record: asyncpg.Record) -> ConflictRecord:
    values: dict[str, Any] = {
        k: (str(v) if k in ("id", "item_a", "item_b", "resolver_id") and v else v) for k, v in dict(record).items()
    }
    return ConflictRecord(**values)


async def open(
    conn: asyncpg.Connection,
    tenant_id: str,
    existing: str,
    new: str,
    conflict_type: str,
    detector: str,
    *,
    score: float | None = None,
    rule: str | None = None,
    explanation: str | None = None,
) -> str | None:
    """A new open conflict (``item_a`` the existing memory, ``item_b`` the new one); None when the pair
    already has one open."""
    conflict_id = await conn.fetchval(
        """INSERT INTO conflicts (tenant_id, id, item_a, item_b, type, detector, score, rule, explanation)
           VALUES ($1, gen_random_uuid(), $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (tenant_id, least(item_a, item_b), greatest(item_a, item_b)) WHERE status = 'open'
           DO NOTHING RETURNING id""",
        tenant_id,
        existing,
        new,
        conflict_type,
        detector,
        score,
        rule,
        explanation,
    )
    return str(conflict_id) if conflict_id else None


async def resolve_open(
    conn: asyncpg.Connection,
    item_id: str,
    resolution: str,
    resolver_id: str | None,
    reason: str | None,
    *,
    other: str | None = None,
    conflict_id: str | None = None,
) -> list[Resolved]:
    """Resolve the open conflicts of ``item_id`` (only the one with ``other``, or only ``conflict_id``)."""
    rows = await conn.fetch(
        """UPDATE conflicts SET status = 'resolved', resolution = $2, resolver_id = $3, reason = $4,
                                resolved_at = now()
           WHERE status = 'open' AND (item_a = $1 OR item_b = $1)
             AND ($5::uuid IS NULL OR item_a = $5 OR item_b = $5) AND ($6::uuid IS NULL OR id = $6)
           RETURNING id, item_a, item_b, type""",
        item_id,
        resolution,
        resolver_id,
        reason,
        other,
        conflict_id,
    )
    return [Resolved(str(r["id"]), str(r["item_a"]), str(r["item_b"]), r["type"]) for r in rows]


async def get(
    conn: asyncpg.Connection, conflict_id: str, viewer: str, *, for_update: bool = False
) -> ConflictRecord | None:
    """The conflict, if ``viewer`` may read both of its memories."""
    lock = " FOR UPDATE OF c" if for_update else ""
    row = await conn.fetchrow(
        f"""SELECT {CONFLICT_COLUMNS} FROM conflicts c
            JOIN memory_items a ON a.id = c.item_a JOIN memory_items b ON b.id = c.item_b
            WHERE c.id = $1 AND {visible_to("$2", "a")} AND {visible_to("$2", "b")}{lock}""",
        conflict_id,
        viewer,
    )
    return _row(row) if row else None


async def listing(
    conn: asyncpg.Connection,
    viewer: str,
    *,
    status: str | None,
    conflict_type: str | None,
    item_id: str | None,
    limit: int,
    after: tuple[datetime, str] | None,
) -> list[ConflictRecord]:
    """Conflicts whose two memories ``viewer`` may read, newest first."""
    rows = await conn.fetch(
        f"""SELECT {CONFLICT_COLUMNS} FROM conflicts c
            JOIN memory_items a ON a.id = c.item_a JOIN memory_items b ON b.id = c.item_b
            WHERE c.tenant_id = engram_current_tenant() AND {visible_to("$1", "a")} AND {visible_to("$1", "b")}
              AND ($2::text IS NULL OR c.status = $2) AND ($3::text IS NULL OR c.type = $3)
              AND ($4::uuid IS NULL OR c.item_a = $4 OR c.item_b = $4)
              AND ($6::timestamptz IS NULL OR (c.created_at, c.id) < ($6, $7::uuid))
            ORDER BY c.created_at DESC, c.id DESC LIMIT $5""",
        viewer,
        status,
        conflict_type,
        item_id,
        limit,
        after[0] if after else None,
        after[1] if after else None,
    )
    return [_row(r) for r in rows]


@dataclass(frozen=True)
class Subject:
    """What the conflicts consumer reads first about an event's item, in one statement."""

    handled: bool  # the consumer's inbox already holds the event
    item: MemoryItem | None  # None: the item is gone
    vector: np.ndarray | None  # None: the item has no vector under the profile


async def subject(conn: asyncpg.Connection, consumer: str, event_id: str, item_id: str, profile: str) -> Subject:
    """Whether ``consumer`` has handled ``event_id`` already, and (when it has not) the item and the vector of
    its own text under ``profile``: ``inbox.seen``, ``items.get`` and ``embeddings.content_vector`` in one round
    trip."""
    row = await conn.fetchrow(
        f"""SELECT EXISTS (SELECT 1 FROM consumer_inbox WHERE consumer = $1 AND event_id = $2::uuid) AS handled,
                   (SELECT embedding FROM memory_embeddings WHERE item_id = $3::uuid AND profile IN ($4, $5)
                    ORDER BY profile = $5 DESC LIMIT 1) AS vector,
                   i.id IS NOT NULL AS found, {", ".join(f"i.{c.strip()}" for c in ITEM_COLUMNS.split(","))}
            FROM (SELECT 1) one LEFT JOIN memory_items i ON i.id = $3::uuid""",
        consumer,
        event_id,
        item_id,
        profile,
        content_profile(profile),
    )
    assert row is not None
    if row["handled"]:
        return Subject(True, None, None)
    item = row_to_item(row) if row["found"] else None
    vector = None if row["vector"] is None else np.asarray(row["vector"].to_numpy(), dtype=np.float32)
    return Subject(False, item, vector)


SEARCHED_PER_NEIGHBOUR = 4  # index rows read per neighbour kept (``nearest_live``)


async def nearest_live(
    conn: asyncpg.Connection,
    item: MemoryItem,
    vector: np.ndarray,
    profile: str,
    dimensions: int,
    limit: int,
    floor: float,
    excluded_kinds: tuple[str, ...] = (),
) -> list[tuple[MemoryItem, float, np.ndarray]]:
    """The live items nearest ``item`` by meaning in its scope, each with its similarity and the vector of its own
    text (what the learned judge's nearest labelled changes read): the same workspace, of any kind but
    ``excluded_kinds``, and the same author when either of the two is private. Nearest first, down to cosine
    similarity ``floor``. The kind is no filter: a contradiction is one whichever kinds its two memories were
    given (docs/adr/0007-conflicts-compared-across-kinds.md).

    ``vector`` is the vector of the item's own text (``subject``). The neighbours are found on ``profile``'s
    index (the rows recall searches), and each similarity is that of the neighbour's own text: its row under
    ``content_profile(profile)`` when it was embedded with its predecessor (docs/adr/0009-context-passages.md).
    Since the index ranks by the searched vectors and the answer by the own ones, ``SEARCHED_PER_NEIGHBOUR`` times
    ``limit`` are read from the index and the ``limit`` nearest by their own text kept (the same ``limit`` as
    before when no vector of the scope was built with a predecessor)."""
    dims = int(dimensions)
    await conn.execute("SET LOCAL hnsw.iterative_scan = 'strict_order'")
    rows = await conn.fetch(
        f"""SELECT {", ".join(f"near.{c.strip()}" for c in ITEM_COLUMNS.split(","))},
                   coalesce(1 - (c.embedding::vector({dims}) <=> $1::vector({dims})), near.searched) AS similarity,
                   coalesce(c.embedding, near.searched_vector) AS own_vector
            FROM (
                SELECT {", ".join(f"i.{c.strip()}" for c in ITEM_COLUMNS.split(","))},
                       1 - (e.embedding::vector({dims}) <=> $1::vector({dims})) AS searched,
                       e.embedding AS searched_vector
                FROM memory_embeddings e JOIN memory_items i ON i.id = e.item_id
                WHERE e.profile = $2 AND i.id <> $3 AND i.kind <> ALL($4::text[]) AND i.workspace_id = $5
                  AND i.invalidated_at IS NULL AND i.superseded_by IS NULL AND {NOT_EXPIRED}
                  AND i.review_status IN ('proposed', 'active', 'disputed')
                  AND ((i.visibility <> 'private' AND $7 <> 'private') OR i.principal_id = $6)
                ORDER BY e.embedding::vector({dims}) <=> $1::vector({dims}) LIMIT $8 * {SEARCHED_PER_NEIGHBOUR}) near
            LEFT JOIN memory_embeddings c ON c.item_id = near.id AND c.profile = $10
            WHERE coalesce(1 - (c.embedding::vector({dims}) <=> $1::vector({dims})), near.searched) >= $9
            ORDER BY similarity DESC LIMIT $8""",
        vector,
        profile,
        item.id,
        list(excluded_kinds),
        item.workspace_id,
        item.principal_id,
        item.visibility,
        limit,
        floor,
        content_profile(profile),
    )
    return [
        (row_to_item(r), float(r["similarity"]), np.asarray(r["own_vector"].to_numpy(), dtype=np.float32)) for r in rows
    ]


async def open_pairs(conn: asyncpg.Connection, item_id: str) -> list[tuple[str, str, str]]:
    """(conflict id, existing item, new item) of each open conflict of ``item_id``."""
    rows = await conn.fetch(
        "SELECT id, item_a, item_b FROM conflicts WHERE status = 'open' "
        "AND (item_a = $1 OR item_b = $1) ORDER BY created_at",
        item_id,
    )
    return [(str(r["id"]), str(r["item_a"]), str(r["item_b"])) for r in rows]


async def open_count(conn: asyncpg.Connection, item_id: str) -> int:
    return int(
        await conn.fetchval(
            "SELECT count(*) FROM conflicts WHERE status = 'open' AND (item_a = $1 OR item_b = $1)", item_id
        )
    )


async def open_among(
    conn: asyncpg.Connection, item_ids: list[str], viewer: str
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """For each of ``item_ids`` in an open conflict, the ids on the other side: first the conflicts other than
    duplicates, then the ``duplicate`` ones. An other side ``viewer`` may not read is given as "" (the conflict
    counts, its id is not disclosed), oldest conflict first whatever the plan. One statement: the open conflicts
    touching the items, with whether the viewer may read each other side."""
    rows = await conn.fetch(
        f"""SELECT c.item_a, c.item_b, c.type = 'duplicate' AS duplicate,
                   EXISTS (SELECT 1 FROM memory_items i WHERE i.id = c.item_a AND {visible_to("$2")}) AS a_readable,
                   EXISTS (SELECT 1 FROM memory_items i WHERE i.id = c.item_b AND {visible_to("$2")}) AS b_readable
            FROM conflicts c
            WHERE c.status = 'open' AND (c.item_a = ANY($1::uuid[]) OR c.item_b = ANY($1::uuid[]))
            ORDER BY c.created_at, c.id""",
        item_ids,
        viewer,
    )
    conflicted: dict[str, list[str]] = {}
    duplicated: dict[str, list[str]] = {}
    for row in rows:
        a, b = str(row["item_a"]), str(row["item_b"])
        others = duplicated if row["duplicate"] else conflicted
        others.setdefault(a, []).append(b if row["b_readable"] else "")
        others.setdefault(b, []).append(a if row["a_readable"] else "")
    return conflicted, duplicated
