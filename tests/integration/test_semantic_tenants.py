"""The vector candidate query (search.semantic) on a store shared by many tenants: a tenant gets its own nearest
memories — the exact top k within the tenant — and none of the others', even when the others' vectors are all
nearer to the query and were written first."""

from __future__ import annotations

import uuid

import asyncpg
import numpy as np
import pytest
from pgvector.asyncpg import register_vector

from engram.config import Settings
from engram.db import search
from engram.db.counts import CountCache
from engram.db.pool import tenant_tx
from engram.domain.models import CallerContext, MemoryItem
from engram.embeddings.provider import EmbeddingProvider
from tests.support.bulk import ITEM_COLUMNS, fact_row
from tests.support.tenants import create_tenant


async def _load(
    owner_pool: asyncpg.Pool, ctx: CallerContext, vectors: np.ndarray, settings: Settings, analyze: bool = True
) -> list[str]:
    """Active memories of ``ctx``'s tenant with these vectors, written straight into the database."""
    tenant = uuid.UUID(ctx.tenant_id)
    ids = [uuid.uuid4() for _ in vectors]
    async with owner_pool.acquire() as conn, conn.transaction():
        await register_vector(conn)
        await conn.execute("SELECT set_config('app.tenant_id', $1, true)", ctx.tenant_id)
        workspace = await conn.fetchval("SELECT id FROM workspaces WHERE tenant_id = $1", tenant)
        author = uuid.UUID(ctx.principal_id)
        rows = [fact_row(tenant, i, workspace, author, f"memory {i}") for i in ids]
        await conn.copy_records_to_table("memory_items", records=rows, columns=list(ITEM_COLUMNS))
        await conn.copy_records_to_table(
            "memory_embeddings",
            records=[(tenant, i, settings.embedding_profile, v) for i, v in zip(ids, vectors, strict=True)],
            columns=["tenant_id", "item_id", "profile", "embedding"],
        )
        if analyze:
            await conn.execute("ANALYZE memory_embeddings")
    return [str(i) for i in ids]


def _around(centre: np.ndarray, n: int, spread: float, rng: np.random.Generator) -> np.ndarray:
    moved = centre + rng.normal(0, spread, (n, centre.shape[0]))
    return (moved / np.linalg.norm(moved, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture(params=["exact", "hnsw"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The search a tenant's share picks: "exact" reads its own rows, as a small tenant does; "hnsw" walks the
    graph every tenant shares, as a large one does."""
    monkeypatch.setattr(search, "EXACT_SCAN_RATIO", 10**9 if request.param == "exact" else 0)
    return str(request.param)


async def _semantic(
    app_pool: asyncpg.Pool,
    ctx: CallerContext,
    query: np.ndarray,
    settings: Settings,
    limit: int,
    filters: search.Filters | None = None,
    counts: CountCache | None = None,
) -> list[tuple[MemoryItem, float]]:
    async with tenant_tx(app_pool, ctx.tenant_id) as conn:
        return await search.semantic(
            conn,
            query,
            settings.embedding_profile,
            settings.embedding_dimensions,
            filters or search.Filters(),
            ctx.principal_id,
            limit,
            counts,
        )


async def test_a_tenant_gets_its_exact_nearest_and_no_foreign_memory(
    path: str,
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    embedder: EmbeddingProvider,
) -> None:
    rng = np.random.default_rng(17)
    query = np.asarray(await embedder.embed_query("who looks after the billing service?"), dtype=np.float32)
    others = [await create_tenant(owner_pool) for _ in range(12)]
    for other in others:  # first, and every one of them nearer to the query than any of the tenant's own
        await _load(owner_pool, other, _around(query, 250, 0.01, rng), settings)
    me = await create_tenant(owner_pool)
    mine = _around(query, 300, 0.05, rng)
    own_ids = await _load(owner_pool, me, mine, settings)
    distances = 1 - mine @ query / np.linalg.norm(query)
    exact = {own_ids[i] for i in np.argsort(distances)[:20]}

    found = await _semantic(app_pool, me, query, settings, 20)

    assert len(found) == 20
    assert all(str(item.tenant_id) == me.tenant_id for item, _ in found)
    if path == "exact":
        assert {str(item.id) for item, _ in found} == exact
    else:  # approximate: nearly all of the exact top 20 past 3,000 nearer foreign vectors
        assert len({str(item.id) for item, _ in found} & exact) >= 18
    similarities = [s for _, s in found]
    assert similarities == sorted(similarities, reverse=True)


async def test_filters_that_keep_out_the_nearest_widen_the_candidates_until_enough_pass(
    path: str,
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    embedder: EmbeddingProvider,
) -> None:
    rng = np.random.default_rng(23)
    query = np.asarray(await embedder.embed_query("which database does the billing service use?"), dtype=np.float32)
    me = await create_tenant(owner_pool)
    vectors = _around(query, 400, 0.05, rng)
    ids = await _load(owner_pool, me, vectors, settings)
    farthest = [ids[i] for i in np.argsort(1 - vectors @ query / np.linalg.norm(query))[-6:]]
    async with owner_pool.acquire() as conn:  # only the six farthest from the query are preferences
        await conn.execute("UPDATE memory_items SET kind = 'preference' WHERE id = ANY($1::uuid[])", farthest)

    found = await _semantic(app_pool, me, query, settings, 5, search.Filters(kinds=["preference"]))

    # the first read (30 vectors) holds none of them: only widening the candidates reaches them
    assert len(found) == 5
    assert {str(item.id) for item, _ in found} <= set(farthest)
    assert all(item.kind == "preference" for item, _ in found)


async def test_the_count_that_chooses_the_search_is_reused_for_a_minute(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    embedder: EmbeddingProvider,
) -> None:
    rng = np.random.default_rng(29)
    query = np.asarray(await embedder.embed_query("where is the team offsite this year?"), dtype=np.float32)
    me = await create_tenant(owner_pool)
    await _load(owner_pool, me, _around(query, 40, 0.05, rng), settings)
    now = [1000.0]
    counts = CountCache(clock=lambda: now[0])

    async def held() -> int:
        await _semantic(app_pool, me, query, settings, 5, counts=counts)
        [value] = [v for key, v in counts.live().items() if isinstance(key, tuple) and me.tenant_id in key[1]]
        return int(value)

    assert await held() == 40
    # (no ANALYZE: the table's size, and with it the exact-scan bound in the key, stays as it was)
    await _load(owner_pool, me, _around(query, 25, 0.05, rng), settings, analyze=False)
    now[0] += 59
    assert await held() == 40  # within the minute the count stands
    now[0] += 2
    assert await held() == 65  # counted again once it has expired
