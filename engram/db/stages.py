"""Where each memory item is in the pipeline: one ``item_stages`` row per stage, pending until its consumer
finishes (or records that it failed)."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

import asyncpg

from engram.db.violations import item_must_exist
from engram.domain.models import Stage
from engram.domain.values import PipelineStage

PIPELINE_STAGES: tuple[str, ...] = tuple(PipelineStage)  # in the order they run


async def record(
    conn: asyncpg.Connection, *, tenant_id: str, item_id: UUID | str, stage: str, status: str, detail: str = ""
) -> None:
    """Record where the item is in the pipeline; ``NotFound`` (``gone``) when the item no longer exists."""
    with item_must_exist(item_id):
        await conn.execute(
            """INSERT INTO item_stages (tenant_id, item_id, stage, status, detail) VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (item_id, stage) DO UPDATE SET status = EXCLUDED.status, detail = EXCLUDED.detail,
                                                          updated_at = now()""",
            tenant_id,
            item_id,
            stage,
            status,
            detail,
        )


@dataclass(frozen=True)
class StageRow:
    """One ``record`` of a batch."""

    tenant_id: str
    item_id: str
    stage: str
    status: str
    detail: str = ""


async def record_many(conn: asyncpg.Connection, rows: list[StageRow]) -> None:
    """``record`` for many rows in one statement, as if each were recorded in turn (an item and stage named twice:
    the last one stands); ``NotFound`` (``gone``) when one of the items no longer exists."""
    last = {(row.item_id, row.stage): row for row in rows}
    if not last:
        return
    kept = list(last.values())
    with item_must_exist(", ".join(row.item_id for row in kept)):
        await conn.execute(
            """INSERT INTO item_stages (tenant_id, item_id, stage, status, detail)
               SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[])
               ON CONFLICT (item_id, stage) DO UPDATE SET status = EXCLUDED.status, detail = EXCLUDED.detail,
                                                          updated_at = now()""",
            [row.tenant_id for row in kept],
            [row.item_id for row in kept],
            [row.stage for row in kept],
            [row.status for row in kept],
            [row.detail for row in kept],
        )


async def finish(conn: asyncpg.Connection, item_id: str, stage: str, detail: str) -> None:
    """Mark a pending stage done (nothing happens when the item has no such stage pending)."""
    await conn.execute(
        "UPDATE item_stages SET status = 'done', detail = $3, updated_at = now() "
        "WHERE item_id = $1 AND stage = $2 AND status = 'pending'",
        item_id,
        stage,
        detail,
    )


async def is_done(conn: asyncpg.Connection, item_id: str, stage: str) -> bool:
    """Whether the item's ``stage`` is recorded as done."""
    return bool(
        await conn.fetchval(
            "SELECT true FROM item_stages WHERE item_id = $1 AND stage = $2 AND status = 'done'", item_id, stage
        )
    )


async def done_among(conn: asyncpg.Connection, item_ids: list[str], stage: str) -> set[str]:
    """Which of ``item_ids`` have ``stage`` recorded as done (``is_done`` for a batch, one statement)."""
    rows = await conn.fetch(
        "SELECT item_id FROM item_stages WHERE item_id = ANY($1::uuid[]) AND stage = $2 AND status = 'done'",
        item_ids,
        stage,
    )
    return {str(r["item_id"]) for r in rows}


async def of_item(conn: asyncpg.Connection, item_id: str) -> list[Stage]:
    """The item's stages in the order the pipeline runs them."""
    rows = await conn.fetch(
        "SELECT stage, status, detail, updated_at FROM item_stages WHERE item_id = $1 "
        "ORDER BY array_position($2::text[], stage), stage",
        item_id,
        list(PIPELINE_STAGES),
    )
    return [Stage(r["stage"], r["status"], r["detail"], r["updated_at"]) for r in rows]
