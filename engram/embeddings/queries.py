"""The recall process's query path in front of an embedding provider: a cache of recent query vectors, then
micro-batches of the misses (``ENGRAM_QUERY_EMBEDDING_*``). It is itself an ``EmbeddingProvider``, so recall
uses it as it used the provider.

The query is embedded in its normalised form (``query_cache.normalise``: NFC, single spaces, trimmed), so a
cached vector is exactly what the model would return; a query that differs only in spacing shares the vector.
"""

from __future__ import annotations

import asyncio

import numpy as np

from engram.config import Settings
from engram.embeddings.batching import MicroBatcher
from engram.embeddings.provider import EmbeddingProvider, create_provider
from engram.embeddings.query_cache import QueryCache, normalise


class QueryEmbedder:
    def __init__(self, provider: EmbeddingProvider, cache_size: int, max_batch: int, slots: int) -> None:
        self._provider = provider
        self.profile = provider.profile
        self.dimensions = provider.dimensions
        self._cache = QueryCache(cache_size)
        self._batcher = MicroBatcher(provider.embed_queries, max_batch, slots)

    async def embed_query(self, text: str) -> np.ndarray:
        text = normalise(text)
        cached = self._cache.get(self.profile, text)
        if cached is not None:
            return cached
        return self._cache.put(self.profile, text, await self._batcher.embed(text))

    async def embed_queries(self, texts: list[str]) -> list[np.ndarray]:
        return list(await asyncio.gather(*(self.embed_query(text) for text in texts)))

    async def embed_passages(self, texts: list[str]) -> list[np.ndarray]:
        return await self._provider.embed_passages(texts)

    async def close(self) -> None:
        await self._batcher.close()
        await self._provider.close()


def create_query_embedder(settings: Settings) -> QueryEmbedder:
    """The configured provider behind the query cache and batcher, as the recall process runs it."""
    return QueryEmbedder(
        create_provider(settings),
        settings.query_embedding_cache_size,
        settings.query_embedding_batch_size,
        settings.query_embedding_workers,
    )
