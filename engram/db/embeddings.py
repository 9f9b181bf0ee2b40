"""Stored vectors, one row per (item, profile)."""

from __future__ import annotations

from uuid import UUID

import asyncpg
import numpy as np

from engram.db.violations import item_must_exist


async def upsert(
    conn: asyncpg.Connection, tenant_id: str, item_id: UUID | str, profile: str, vector: np.ndarray
) -> None:
    """Store the item's vector under ``profile``; ``NotFound`` (``gone``) when the item no longer exists."""
    with item_must_exist(item_id):
        await conn.execute(
            """INSERT INTO memory_embeddings (tenant_id, item_id, profile, embedding) VALUES ($1, $2, $3, $4)
               ON CONFLICT (item_id, profile) DO UPDATE SET embedding = EXCLUDED.embedding, created_at = now()""",
            tenant_id,
            item_id,
            profile,
            vector,
        )


async def store_if_item(
    conn: asyncpg.Connection, tenant_id: str, item_id: UUID | str, profile: str, vector: np.ndarray
) -> bool:
    """``upsert`` when the item exists, holding it as ``items.hold`` does (a key-share lock: it cannot be deleted
    before the transaction ends), in one statement; False (nothing stored) when it no longer exists."""
    return bool(
        await conn.fetchval(
            """INSERT INTO memory_embeddings (tenant_id, item_id, profile, embedding)
               SELECT $1, i.id, $3, $4 FROM memory_items i WHERE i.id = $2 FOR KEY SHARE
               ON CONFLICT (item_id, profile) DO UPDATE SET embedding = EXCLUDED.embedding, created_at = now()
               RETURNING true""",
            tenant_id,
            item_id,
            profile,
            vector,
        )
    )


async def vectors(conn: asyncpg.Connection, item_ids: list[str], profile: str) -> dict[str, np.ndarray]:
    rows = await conn.fetch(
        "SELECT item_id, embedding FROM memory_embeddings WHERE item_id = ANY($1::uuid[]) AND profile = $2",
        item_ids,
        profile,
    )
    return {str(r["item_id"]): np.asarray(r["embedding"].to_numpy(), dtype=np.float32) for r in rows}


async def vector(conn: asyncpg.Connection, item_id: str, profile: str) -> np.ndarray | None:
    """The item's vector under ``profile`` (None when it has none yet)."""
    value = await conn.fetchval(
        "SELECT embedding FROM memory_embeddings WHERE item_id = $1 AND profile = $2", item_id, profile
    )
    return None if value is None else np.asarray(value.to_numpy(), dtype=np.float32)


async def exists(conn: asyncpg.Connection, item_id: str, profile: str) -> bool:
    return bool(
        await conn.fetchval("SELECT true FROM memory_embeddings WHERE item_id = $1 AND profile = $2", item_id, profile)
    )


async def having(conn: asyncpg.Connection, item_ids: list[str], profile: str) -> set[str]:
    """Which of ``item_ids`` have a vector under ``profile`` (``exists`` for a batch, one statement)."""
    rows = await conn.fetch(
        "SELECT item_id FROM memory_embeddings WHERE item_id = ANY($1::uuid[]) AND profile = $2", item_ids, profile
    )
    return {str(r["item_id"]) for r in rows}
