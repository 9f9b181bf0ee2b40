"""The items of the caller's tenant that it may read, page by page in a chosen order, and counted for its
overview (``GET /v1/items``, ``GET /v1/stats``).

Each query names the tenant (``engram_current_tenant()``): the policies also let a tenant read other
tenants' public items, which neither the listing nor the counts include.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import asyncpg

from engram.db.items import TENANT, row_to_item, visible_to
from engram.db.search import ITEM_COLUMNS_I, overlaps
from engram.domain.models import MemoryItem
from engram.domain.values import ItemSort, PipelineStage

OWN = f"i.tenant_id = {TENANT}"
REPLACED = "(i.superseded_by IS NOT NULL OR i.review_status = 'superseded')"
CURRENT = f"i.invalidated_at IS NULL AND NOT {REPLACED}"  # neither invalidated nor superseded

# Each order's key columns, the SQL type of each, and whether it runs descending. The keys end with the
# creation time and the id, so the order is total and a keyset cursor resumes after exactly one item.
SORT_KEYS: dict[ItemSort, tuple[tuple[tuple[str, str], ...], bool]] = {
    ItemSort.NEWEST: ((("created_at", "timestamptz"), ("id", "uuid")), True),
    ItemSort.OLDEST: ((("created_at", "timestamptz"), ("id", "uuid")), False),
    ItemSort.IMPORTANCE: ((("importance", "real"), ("created_at", "timestamptz"), ("id", "uuid")), True),
}

Key = tuple[float | datetime | str, ...]


@dataclass(frozen=True)
class ItemCriteria:
    """Every criterion given must match; an empty list and None are no criterion."""

    kinds: list[str] = field(default_factory=list)
    review_statuses: list[str] = field(default_factory=list)
    workspace_id: str | None = None
    author_id: str | None = None
    tag: str | None = None
    subject: str | None = None
    created_after: datetime | None = None  # inclusive
    created_before: datetime | None = None  # exclusive
    valid_start: datetime | None = None  # the validity interval overlaps [valid_start, valid_end]
    valid_end: datetime | None = None
    include_superseded: bool = False  # superseded and invalidated items too


def sort_key(item: MemoryItem, sort: ItemSort) -> Key:
    """The values of ``item`` that a cursor resumes after, in the order's key columns."""
    columns, _ = SORT_KEYS[sort]
    values: dict[str, float | datetime | str] = {
        "created_at": item.created_at,
        "id": str(item.id),
        "importance": item.importance,
    }
    return tuple(values[name] for name, _ in columns)


async def page(
    conn: asyncpg.Connection,
    viewer: str,
    criteria: ItemCriteria,
    sort: ItemSort,
    limit: int,
    after: Key | None = None,
) -> list[MemoryItem]:
    """At most ``limit`` items in ``sort`` order, starting right after the item whose key is ``after``."""
    args: list[object] = []

    def param(value: object, sql_type: str) -> str:
        args.append(value)
        return f"${len(args)}::{sql_type}"

    clauses = [OWN, visible_to(param(viewer, "text"))]
    if not criteria.include_superseded:
        clauses.append(CURRENT)
    if criteria.kinds:
        clauses.append(f"i.kind = ANY({param(criteria.kinds, 'text[]')})")
    if criteria.review_statuses:
        clauses.append(f"i.review_status = ANY({param(criteria.review_statuses, 'text[]')})")
    if criteria.workspace_id:
        clauses.append(f"i.workspace_id = {param(criteria.workspace_id, 'uuid')}")
    if criteria.author_id:
        clauses.append(f"i.principal_id = {param(criteria.author_id, 'uuid')}")
    if criteria.tag:
        clauses.append(f"i.tags @> ARRAY[{param(criteria.tag, 'text')}]")
    if criteria.subject:
        clauses.append(f"i.subject = {param(criteria.subject, 'text')}")
    if criteria.created_after:
        clauses.append(f"i.created_at >= {param(criteria.created_after, 'timestamptz')}")
    if criteria.created_before:
        clauses.append(f"i.created_at < {param(criteria.created_before, 'timestamptz')}")
    if criteria.valid_start or criteria.valid_end:
        start = param(criteria.valid_start, "timestamptz") if criteria.valid_start else None
        end = param(criteria.valid_end, "timestamptz") if criteria.valid_end else None
        clauses.append(overlaps(start, end))
    columns, descending = SORT_KEYS[sort]
    names = ", ".join(f"i.{name}" for name, _ in columns)
    if after is not None:
        bounds = ", ".join(param(value, sql_type) for value, (_, sql_type) in zip(after, columns, strict=True))
        clauses.append(f"({names}) {'<' if descending else '>'} ({bounds})")
    direction = " DESC" if descending else ""
    order = ", ".join(f"i.{name}{direction}" for name, _ in columns)
    rows = await conn.fetch(
        f"SELECT {ITEM_COLUMNS_I} FROM memory_items i WHERE {' AND '.join(clauses)} "
        f"ORDER BY {order} LIMIT {param(limit, 'int')}",
        *args,
    )
    return [row_to_item(r) for r in rows]


@dataclass
class Stats:
    """Counts over the items one principal may read in its tenant."""

    by_review_status: dict[str, int] = field(default_factory=dict)  # current items (not superseded, invalidated)
    by_kind: dict[str, int] = field(default_factory=dict)
    oldest_proposed_at: datetime | None = None
    open_conflicts: int = 0
    pending_stages: dict[str, int] = field(default_factory=dict)
    failed_stages: dict[str, int] = field(default_factory=dict)
    expiring_within_7d: int = 0
    trash: int = 0
    superseded: int = 0  # superseded and not invalidated
    invalidated: int = 0

    @property
    def total(self) -> int:
        return sum(self.by_review_status.values())


async def stats(conn: asyncpg.Connection, viewer: str) -> Stats:
    """What ``viewer`` may read in the tenant in scope, counted in one transaction (one snapshot)."""
    seen = f"{OWN} AND {visible_to('$1')}"
    result = Stats()
    for row in await conn.fetch(
        f"SELECT i.kind, i.review_status, count(*) AS n FROM memory_items i WHERE {seen} AND {CURRENT} "
        "GROUP BY i.kind, i.review_status",
        viewer,
    ):
        status, kind = row["review_status"], row["kind"]
        result.by_review_status[status] = result.by_review_status.get(status, 0) + row["n"]
        result.by_kind[kind] = result.by_kind.get(kind, 0) + row["n"]
    row = await conn.fetchrow(
        f"""SELECT
              min(i.created_at) FILTER (WHERE {CURRENT} AND i.review_status = 'proposed') AS oldest_proposed_at,
              count(*) FILTER (WHERE i.invalidated_at IS NULL AND {REPLACED}) AS superseded,
              count(*) FILTER (WHERE i.invalidated_at IS NOT NULL) AS invalidated,
              count(*) FILTER (WHERE i.invalidated_at IS NULL AND i.expires_at IS NOT NULL
                               AND i.expires_at <= now() + interval '7 days'
                               AND i.review_status IN ('proposed', 'active', 'disputed')) AS expiring
            FROM memory_items i WHERE {seen}""",
        viewer,
    )
    result.oldest_proposed_at = row["oldest_proposed_at"]
    result.superseded, result.invalidated, result.expiring_within_7d = (
        row["superseded"],
        row["invalidated"],
        row["expiring"],
    )
    result.pending_stages = {stage.value: 0 for stage in PipelineStage}
    result.failed_stages = {stage.value: 0 for stage in PipelineStage}
    for row in await conn.fetch(
        f"""SELECT s.stage, s.status, count(*) AS n FROM item_stages s JOIN memory_items i ON i.id = s.item_id
            WHERE {seen} AND s.status <> 'done' GROUP BY s.stage, s.status""",
        viewer,
    ):
        target = result.pending_stages if row["status"] == "pending" else result.failed_stages
        target[row["stage"]] = row["n"]
    result.open_conflicts = await conn.fetchval(
        f"""SELECT count(*) FROM conflicts c
            JOIN memory_items a ON a.id = c.item_a JOIN memory_items b ON b.id = c.item_b
            WHERE c.tenant_id = engram_current_tenant() AND c.status = 'open'
              AND {visible_to("$1", "a")} AND {visible_to("$1", "b")}""",
        viewer,
    )
    result.trash = await conn.fetchval(
        f"SELECT count(*) FROM trash t WHERE t.tenant_id = engram_current_tenant() AND {visible_to('$1', 't')}",
        viewer,
    )
    return result
