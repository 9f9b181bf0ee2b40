"""Micro-batching of concurrent queries into one model call.

A query that arrives while every model slot is busy waits in a queue; the next free slot takes up to
``max_batch`` queued queries at once and embeds them in a single call. So a lone query goes straight to the
model (no timer, no added latency), and under load the model sees fewer, larger calls.

Each caller gets its own future: a batch's result is handed out in the callers' order, an error in a batch
fails only the callers in that batch, and a caller that is cancelled while queued is dropped before its batch
runs (one cancelled while its batch runs just does not receive the result; the batch finishes for the others).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import numpy as np

from engram.telemetry.metrics import QUERY_EMBEDDING_BATCH

log = logging.getLogger(__name__)

EmbedMany = Callable[[list[str]], Awaitable[list[np.ndarray]]]


@dataclass(frozen=True)
class _Waiting:
    text: str
    future: asyncio.Future[np.ndarray]


class MicroBatcher:
    def __init__(self, embed_many: EmbedMany, max_batch: int, slots: int = 1) -> None:
        """``embed_many`` embeds a list of texts (in order); at most ``slots`` calls of it run at once."""
        if max_batch < 1 or slots < 1:
            raise ValueError("max_batch and slots must be >= 1")
        self._embed_many = embed_many
        self._max_batch = max_batch
        self._slots = slots
        self._queue: deque[_Waiting] = deque()
        self._workers: set[asyncio.Task[None]] = set()  # a worker leaves the set itself, as it sees the queue empty

    async def embed(self, text: str) -> np.ndarray:
        future: asyncio.Future[np.ndarray] = asyncio.get_running_loop().create_future()
        self._queue.append(_Waiting(text, future))
        if len(self._workers) < self._slots:
            worker = asyncio.create_task(self._work())
            self._workers.add(worker)
        return await future  # cancelling the caller cancels its future; the worker skips or ignores it

    async def _work(self) -> None:
        """Take batches off the queue until it is empty: one model call at a time per worker."""
        try:
            await self._drain()
        finally:
            # synchronously with the queue found empty (no await in between), so a query queued after this
            # point always finds a free slot and starts a worker
            task = asyncio.current_task()
            if task is not None:
                self._workers.discard(task)

    async def _drain(self) -> None:
        while self._queue:
            batch: list[_Waiting] = []
            while self._queue and len(batch) < self._max_batch:
                waiting = self._queue.popleft()
                if not waiting.future.done():  # a cancelled caller costs no model time
                    batch.append(waiting)
            if not batch:
                continue
            QUERY_EMBEDDING_BATCH.observe(len(batch))
            try:
                vectors = await self._embed_many([w.text for w in batch])
                if len(vectors) != len(batch):
                    raise RuntimeError(f"embedding returned {len(vectors)} vectors for {len(batch)} texts")
            except asyncio.CancelledError:
                for waiting in batch:
                    waiting.future.cancel()
                raise
            except Exception as exc:  # handed to this batch's callers, who raise it; the next batch still runs
                for waiting in batch:
                    if not waiting.future.done():
                        waiting.future.set_exception(exc)
                continue
            for waiting, vector in zip(batch, vectors, strict=True):
                if not waiting.future.done():
                    waiting.future.set_result(vector)

    async def close(self) -> None:
        """Wait for the batches already queued (they belong to callers still waiting), then stop."""
        while self._workers:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*self._workers, return_exceptions=True)
