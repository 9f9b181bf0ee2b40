"""The recall process's query path (cache, micro-batches, single-threaded calls side by side) with the real e5
model: every vector it hands out is the one the plain provider computes for the same text alone, and recall
ranks the same way with it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import numpy as np
import pytest
import pytest_asyncio
from prometheus_client import REGISTRY

from engram.config import Settings
from engram.domain.models import CallerContext
from engram.embeddings.provider import EmbeddingProvider, LocalE5Provider, create_provider
from engram.embeddings.queries import QueryEmbedder, create_query_embedder
from services.embedder.service import EmbedderService
from services.ingest.service import IngestService, RememberCommand
from services.recall.ranking import RecallQuery
from services.recall.service import RecallService
from tests.support.outbox import deliver
from tests.support.queries import QUERIES as LATENCY_QUERIES

QUERIES = [*LATENCY_QUERIES, "quem mudou para Lisboa?", ""]  # e5 is multilingual; and the empty query


class CountingProvider:
    """The real local model, counting the texts it is asked to embed as queries."""

    def __init__(self, inner: LocalE5Provider) -> None:
        self._inner = inner
        self.profile = inner.profile
        self.dimensions = inner.dimensions
        self.calls: list[list[str]] = []

    async def embed_passages(self, texts: list[str]) -> list[np.ndarray]:
        return await self._inner.embed_passages(texts)

    async def embed_query(self, text: str) -> np.ndarray:
        return (await self.embed_queries([text]))[0]

    async def embed_queries(self, texts: list[str]) -> list[np.ndarray]:
        self.calls.append(list(texts))
        return await self._inner.embed_queries(texts)

    async def close(self) -> None:
        return None


@pytest.fixture(scope="module")
def two_single_threaded() -> LocalE5Provider:
    """As the recall process runs the model by default: two calls at once, one OpenMP thread each."""
    return LocalE5Provider("multilingual-e5-small:384", 384, query_workers=2, query_threads=1)


@pytest_asyncio.fixture
async def alone(embedder: EmbeddingProvider) -> dict[str, np.ndarray]:
    """Each query embedded by itself, one at a time, with the engine's default threads: the reference."""
    return {q: await embedder.embed_query(q) for q in QUERIES}


def counter(outcome: str) -> float:
    return REGISTRY.get_sample_value("engram_query_embedding_cache_total", {"outcome": outcome}) or 0.0


async def test_concurrent_queries_get_the_vectors_each_would_get_alone_in_their_order(
    two_single_threaded: LocalE5Provider, alone: dict[str, np.ndarray]
) -> None:
    counting = CountingProvider(two_single_threaded)
    queries = QueryEmbedder(counting, cache_size=0, max_batch=8, slots=2)
    asked = QUERIES * 3
    got = await asyncio.gather(*(queries.embed_query(q) for q in asked))
    for text, vector in zip(asked, got, strict=True):
        assert vector.dtype == np.float32 and vector.shape == (384,)
        np.testing.assert_array_equal(vector, alone[text], err_msg=text)
    assert sum(map(len, counting.calls)) == len(asked)  # no cache: every query went to the model once
    assert max(map(len, counting.calls)) > 1  # and some went together


async def test_a_batch_of_queries_equals_the_queries_alone(
    two_single_threaded: LocalE5Provider, alone: dict[str, np.ndarray]
) -> None:
    batched = await two_single_threaded.embed_queries(QUERIES)
    for text, vector in zip(QUERIES, batched, strict=True):
        np.testing.assert_array_equal(vector, alone[text], err_msg=text)


async def test_a_cache_hit_returns_the_same_vector_without_the_model(
    two_single_threaded: LocalE5Provider, alone: dict[str, np.ndarray]
) -> None:
    counting = CountingProvider(two_single_threaded)
    queries = QueryEmbedder(counting, cache_size=16, max_batch=8, slots=2)
    hits, misses = counter("hit"), counter("miss")
    first = await queries.embed_query("who moved to Lisbon?")
    again = await queries.embed_query("who moved to Lisbon?")
    spaced = await queries.embed_query("  who moved \t to Lisbon?\n")
    assert again is first and spaced is first
    np.testing.assert_array_equal(first, alone["who moved to Lisbon?"])
    assert counting.calls == [["who moved to Lisbon?"]]
    assert (counter("hit") - hits, counter("miss") - misses) == (2, 1)
    with pytest.raises(ValueError):
        first[0] = 0.0  # shared between callers, so read-only


async def test_the_cache_keeps_only_the_most_recently_used(two_single_threaded: LocalE5Provider) -> None:
    counting = CountingProvider(two_single_threaded)
    queries = QueryEmbedder(counting, cache_size=2, max_batch=8, slots=2)
    for text in ("problems with the VPN", "who moved to Lisbon?", "problems with the VPN", "hardware key issues"):
        await queries.embed_query(text)
    # "who moved to Lisbon?" was the least recently used when the third distinct query came
    await queries.embed_query("problems with the VPN")
    await queries.embed_query("who moved to Lisbon?")
    assert [t for call in counting.calls for t in call] == [
        "problems with the VPN",
        "who moved to Lisbon?",
        "hardware key issues",
        "who moved to Lisbon?",
    ]


async def test_the_configured_query_path_matches_the_plain_provider(alone: dict[str, np.ndarray]) -> None:
    queries = create_query_embedder(Settings())
    try:
        got = await asyncio.gather(*(queries.embed_query(q) for q in QUERIES))
        for text, vector in zip(QUERIES, got, strict=True):
            np.testing.assert_array_equal(vector, alone[text], err_msg=text)
        assert queries.profile == create_provider(Settings()).profile
    finally:
        await queries.close()


@pytest_asyncio.fixture
async def populated(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> AsyncIterator[CallerContext]:
    ingest = IngestService(app_pool, settings)
    for content in (
        "Alice is allergic to peanuts, so the team avoids them at lunch.",
        "Deployments to production happen on Tuesdays after the standup.",
        "Our main database is PostgreSQL 18 with the pgvector extension.",
        "Bob prefers dark roast coffee in the morning.",
        "Grace moved to Lisbon and now runs the billing service.",
    ):
        await ingest.remember(tenant, RememberCommand(content=content, kind="fact"))
    await deliver(owner_pool, EmbedderService(app_pool, settings, embedder).handle, tenant=tenant, unsent=True)
    yield tenant


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
async def test_recall_ranks_the_same_through_the_query_path(
    mode: str,
    populated: CallerContext,
    app_pool: asyncpg.Pool,
    settings: Settings,
    embedder: EmbeddingProvider,
    two_single_threaded: LocalE5Provider,
) -> None:
    plain = RecallService(app_pool, settings, embedder)
    batched = RecallService(app_pool, settings, QueryEmbedder(two_single_threaded, cache_size=16, max_batch=8, slots=2))
    asked = ["who has a food allergy?", "when do we deploy?", "where did Grace move?", "what does Bob drink?"]
    want = [await plain.ranking.recall(populated, RecallQuery(mode=mode, query=q)) for q in asked]
    for _ in range(2):  # the second pass is served from the cache
        got = await asyncio.gather(*(batched.ranking.recall(populated, RecallQuery(mode=mode, query=q)) for q in asked))
        for w, g in zip(want, got, strict=True):
            assert [(r.item.id, r.score) for r in g.items] == [(r.item.id, r.score) for r in w.items]
            assert len(w.items) > 0
