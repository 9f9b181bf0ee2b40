"""Classification receipts and the fields a classification sets on an item."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import asyncpg

from engram.db.items import ITEM_COLUMNS, row_to_item
from engram.db.violations import item_must_exist
from engram.domain.models import MemoryItem

CLASSIFIABLE = (
    "kind",
    "wing",
    "room",
    "visibility",
    "taxonomy_confidence",
    "retention",
    "retention_confidence",
    "sensitivity",
)


async def apply(conn: asyncpg.Connection, item_id: str, values: dict[str, Any]) -> MemoryItem:
    """Set the given classification fields (and ``classified_at``) on the item."""
    unknown = set(values) - set(CLASSIFIABLE)
    if unknown:
        raise ValueError(f"not classification fields: {sorted(unknown)}")
    assignments = ", ".join([f"{name} = ${i}" for i, name in enumerate(values, start=2)] + ["classified_at = now()"])
    row = await conn.fetchrow(
        f"UPDATE memory_items SET {assignments} WHERE id = $1 RETURNING {ITEM_COLUMNS}", item_id, *values.values()
    )
    return row_to_item(row)


async def add_receipt(
    conn: asyncpg.Connection,
    *,
    tenant_id: str,
    item_id: str,
    classifier: str,
    fallback_reason: str | None,
    output: dict[str, Any],
    applied: dict[str, Any],
) -> None:
    """``NotFound`` (``gone``) when the item no longer exists."""
    with item_must_exist(item_id):
        await conn.execute(
            "INSERT INTO classification_receipts (tenant_id, item_id, classifier, fallback_reason, output, applied) "
            "VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)",
            tenant_id,
            item_id,
            classifier,
            fallback_reason,
            json.dumps(output),
            json.dumps(applied),
        )


@dataclass(frozen=True)
class Receipt:
    """One ``add_receipt`` of a batch."""

    tenant_id: str
    item_id: str
    classifier: str
    fallback_reason: str | None
    output: dict[str, Any]
    applied: dict[str, Any]


async def add_receipts(conn: asyncpg.Connection, rows: list[Receipt]) -> None:
    """``add_receipt`` for many in one statement, in the order given; ``NotFound`` (``gone``) when one of the
    items no longer exists."""
    if not rows:
        return
    with item_must_exist(", ".join(row.item_id for row in rows)):
        await conn.execute(
            "INSERT INTO classification_receipts (tenant_id, item_id, classifier, fallback_reason, output, applied) "
            "SELECT t, i, c, f, o::jsonb, a::jsonb "
            "FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[]) "
            "WITH ORDINALITY AS x(t, i, c, f, o, a, n) ORDER BY n",
            [row.tenant_id for row in rows],
            [row.item_id for row in rows],
            [row.classifier for row in rows],
            [row.fallback_reason for row in rows],
            [json.dumps(row.output) for row in rows],
            [json.dumps(row.applied) for row in rows],
        )


async def receipts(conn: asyncpg.Connection, item_id: str) -> list[dict[str, Any]]:
    rows = await conn.fetch(
        "SELECT classifier, fallback_reason, output::text AS output, applied::text AS applied, "
        "created_at FROM classification_receipts WHERE item_id = $1 ORDER BY id",
        item_id,
    )
    return [{**dict(r), "output": json.loads(r["output"]), "applied": json.loads(r["applied"])} for r in rows]
