"""Stored vectors, one row per (item, profile).

With context passages (docs/adr/0009-context-passages.md) a memory of a session that has a predecessor (``PREDECESSOR``)
holds two rows: under the configured profile the vector recall searches, of the predecessor's text and its own
(``context_item_id`` names the predecessor), and under ``content_profile(profile)`` the vector of its own text.
What compares one memory's own meaning reads ``content_vectors``; recall reads the profile's row."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

import asyncpg
import numpy as np

from engram.db.items import NOT_EXPIRED
from engram.db.violations import item_must_exist

CONTENT_SUFFIX = "#content"

# Whether ``i`` may be the predecessor of the memory ``s``: a live memory (not in the trash, not expired) of its
# tenant, workspace, author and session, created strictly before it, readable by everyone who may read ``s`` (its
# visibility the same as that of ``s`` or wider: private < workspace < tenant < public). A memory without a
# session has none. The one place this rule is written; services/embedder/README.md describes it.
QUALIFIES = f"""s.source_session IS NOT NULL AND i.tenant_id = s.tenant_id
      AND i.workspace_id IS NOT DISTINCT FROM s.workspace_id AND i.principal_id = s.principal_id
      AND i.source_session = s.source_session AND i.created_at < s.created_at AND i.id <> s.id AND {NOT_EXPIRED}
      AND array_position(ARRAY['private', 'workspace', 'tenant', 'public'], i.visibility)
          >= array_position(ARRAY['private', 'workspace', 'tenant', 'public'], s.visibility)"""

# The predecessor of the memory ``s``: the latest memory that ``QUALIFIES``.
PREDECESSOR = f"""
    SELECT i.id, i.content FROM memory_items i WHERE {QUALIFIES}
    ORDER BY i.created_at DESC, i.id DESC LIMIT 1"""


def content_profile(profile: str) -> str:
    """Where a memory embedded with its predecessor keeps the vector of its own text."""
    return profile + CONTENT_SUFFIX


@dataclass(frozen=True)
class Predecessor:
    id: str
    content: str


async def predecessors(conn: asyncpg.Connection, item_ids: list[str]) -> dict[str, Predecessor]:
    """The predecessor (``PREDECESSOR``) of each of ``item_ids`` that has one, in one statement."""
    rows = await conn.fetch(
        f"""SELECT s.id AS item_id, p.id, p.content FROM memory_items s
            CROSS JOIN LATERAL ({PREDECESSOR}) p WHERE s.id = ANY($1::uuid[])""",
        item_ids,
    )
    return {str(r["item_id"]): Predecessor(str(r["id"]), r["content"]) for r in rows}


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
    conn: asyncpg.Connection,
    tenant_id: str,
    item_id: UUID | str,
    profile: str,
    vector: np.ndarray,
    content: np.ndarray | None = None,
    context_item_id: str | None = None,
) -> bool:
    """``upsert`` when the item exists, holding it as ``items.hold`` does (a key-share lock: it cannot be deleted
    before the transaction ends), in one statement; False (nothing stored) when it no longer exists.

    With ``context_item_id`` (the predecessor ``vector`` was built with), ``vector`` is stored only while that
    item still ``QUALIFIES`` as the item's predecessor, and held with a share lock: its deletion or update (a
    visibility patch) waits for this commit, so what its event embeds again comes after it, and one committed
    first is seen and nothing is stored. ``content`` (the item's own vector) goes under
    ``content_profile(profile)``. False when either item is gone or the predecessor no longer qualifies. Without
    ``context_item_id``, the item's row under ``content_profile(profile)``, if any, is deleted."""
    if context_item_id is None:
        return bool(
            await conn.fetchval(
                """WITH stored AS (
                       INSERT INTO memory_embeddings (tenant_id, item_id, profile, embedding)
                       SELECT $1, i.id, $3, $4 FROM memory_items i WHERE i.id = $2 FOR KEY SHARE
                       ON CONFLICT (item_id, profile) DO UPDATE
                           SET embedding = EXCLUDED.embedding, created_at = now(), context_item_id = NULL
                       RETURNING item_id),
                   dropped AS (DELETE FROM memory_embeddings WHERE item_id = (SELECT item_id FROM stored)
                               AND profile = $5)
                   SELECT true FROM stored""",
                tenant_id,
                item_id,
                profile,
                vector,
                content_profile(profile),
            )
        )
    assert content is not None, "a vector built with a predecessor comes with the item's own"
    return bool(
        await conn.fetchval(
            f"""WITH held AS (SELECT s.id FROM memory_items s JOIN memory_items i ON i.id = $6
                              WHERE s.id = $2 AND {QUALIFIES} FOR KEY SHARE OF s FOR SHARE OF i),
                   stored AS (
                       INSERT INTO memory_embeddings (tenant_id, item_id, profile, embedding, context_item_id)
                       SELECT $1, id, p.profile, p.embedding, p.context FROM held,
                           (VALUES ($3, $4::vector, $6::uuid), ($5, $7::vector, NULL)) p(profile, embedding, context)
                       ON CONFLICT (item_id, profile) DO UPDATE SET embedding = EXCLUDED.embedding,
                           created_at = now(), context_item_id = EXCLUDED.context_item_id
                       RETURNING item_id)
               SELECT true FROM stored LIMIT 1""",
            tenant_id,
            item_id,
            profile,
            vector,
            content_profile(profile),
            context_item_id,
            content,
        )
    )


async def content_vectors(conn: asyncpg.Connection, item_ids: list[str], profile: str) -> dict[str, np.ndarray]:
    """What each of ``item_ids`` says by itself: its vector under ``content_profile(profile)`` when it has one
    (it was embedded with its predecessor), else its vector under ``profile``; one statement."""
    rows = await conn.fetch(
        """SELECT DISTINCT ON (item_id) item_id, embedding FROM memory_embeddings
           WHERE item_id = ANY($1::uuid[]) AND profile IN ($2, $3)
           ORDER BY item_id, profile = $3 DESC""",
        item_ids,
        profile,
        content_profile(profile),
    )
    return {str(r["item_id"]): np.asarray(r["embedding"].to_numpy(), dtype=np.float32) for r in rows}


async def content_vector(conn: asyncpg.Connection, item_id: str, profile: str) -> np.ndarray | None:
    """``content_vectors`` of one item (None when it has no vector yet)."""
    return (await content_vectors(conn, [item_id], profile)).get(item_id)


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


async def built_on(conn: asyncpg.Connection, item_ids: list[str], profile: str) -> dict[str, str | None]:
    """The items whose vector under ``profile`` was built with one of ``item_ids`` as their predecessor, and
    ``item_ids`` themselves when they have one: each with the predecessor its vector was built with (None: its
    own text alone); one statement."""
    rows = await conn.fetch(
        """SELECT item_id, context_item_id FROM memory_embeddings
           WHERE profile = $2 AND (context_item_id = ANY($1::uuid[]) OR item_id = ANY($1::uuid[]))""",
        item_ids,
        profile,
    )
    return {str(r["item_id"]): None if r["context_item_id"] is None else str(r["context_item_id"]) for r in rows}


async def built_without(conn: asyncpg.Connection, item_ids: list[str], profile: str) -> dict[str, str | None]:
    """The items with a vector under ``profile`` whose predecessor (``PREDECESSOR``) is now one of ``item_ids``
    but whose vector was built with another or none (a predecessor restored from the trash, say): each with the
    predecessor its vector was built with, as ``built_on`` answers; one statement. Only the memories after one of
    ``item_ids`` in its session that it ``QUALIFIES`` for are looked at."""
    rows = await conn.fetch(
        f"""SELECT s.id AS item_id, e.context_item_id FROM memory_items i
            JOIN memory_items s ON {QUALIFIES}
            JOIN memory_embeddings e ON e.item_id = s.id AND e.profile = $2
            CROSS JOIN LATERAL ({PREDECESSOR}) p
            WHERE i.id = ANY($1::uuid[]) AND p.id = i.id AND e.context_item_id IS DISTINCT FROM i.id""",
        item_ids,
        profile,
    )
    return {str(r["item_id"]): None if r["context_item_id"] is None else str(r["context_item_id"]) for r in rows}
