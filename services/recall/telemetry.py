"""Recall telemetry off the request path: a bounded queue that a background task drains in batches.

A recall only appends to the queue (never waits on the database); when the queue is full the oldest entry is
dropped and counted, so telemetry can never slow recall down or grow without bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque

import asyncpg

from engram.db import recall_logs
from engram.db.pool import tenant_tx
from engram.telemetry.metrics import RECALL_TELEMETRY

log = logging.getLogger(__name__)

MAX_QUEUED = 10_000
FLUSH_INTERVAL_S = 0.5


class RecallTelemetry:
    def __init__(self, pool: asyncpg.Pool, max_queued: int = MAX_QUEUED) -> None:
        self._pool = pool
        self._queue: deque[recall_logs.Served] = deque(maxlen=max_queued)
        self._wake = asyncio.Event()

    def served(self, entry: recall_logs.Served) -> None:
        if len(self._queue) == self._queue.maxlen:
            RECALL_TELEMETRY.labels("dropped").inc()
        self._queue.append(entry)
        if len(self._queue) >= 100:
            self._wake.set()

    async def flush(self) -> int:
        """Write everything queued (one transaction per tenant); returns how many recalls were written."""
        batch = [self._queue.popleft() for _ in range(len(self._queue))]
        by_tenant: dict[str, list[recall_logs.Served]] = {}
        for entry in batch:
            by_tenant.setdefault(entry.tenant_id, []).append(entry)
        for tenant_id, entries in by_tenant.items():
            try:
                async with tenant_tx(self._pool, tenant_id) as conn:
                    await recall_logs.record(conn, entries)
                RECALL_TELEMETRY.labels("written").inc(len(entries))
            except Exception:
                RECALL_TELEMETRY.labels("failed").inc(len(entries))
                log.exception("recall telemetry for tenant %s lost %d entries", tenant_id, len(entries))
        return len(batch)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), FLUSH_INTERVAL_S)
            self._wake.clear()
            await self.flush()
        await self.flush()
