"""The outbox backlog as ingest last counted it: ``watch`` recounts it every ``interval_s`` whatever NATS does (the
relay also asks after each round; the count is shared, so never more often), and ``Remember`` reads it (``admit``)
without a query of its own.

When more than ``limit`` rows wait unsent, NATS or the relay is not keeping up; a new memory would only lengthen
the queue, so ``admit`` refuses it (``Unavailable``, code ``backlog_full``, with a retry delay) before anything is
written. The figure lags the truth by at most ``interval_s``: the bound is a brake, not an exact quota.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import asyncpg

from engram.db import outbox
from engram.db.pool import system_tx
from engram.errors import Unavailable
from engram.telemetry import tracing
from engram.telemetry.metrics import OUTBOX_AGE, OUTBOX_BACKLOG

RETRY_AFTER_S = 5.0
"""What a refused caller is told to wait: a few relay rounds."""


class Backlog:
    def __init__(self, limit: int = 0, interval_s: float = 2.0) -> None:
        self.limit = limit  # 0: no bound
        self.interval_s = interval_s
        self.unsent = 0
        self.oldest_age_s = 0.0
        self._counted_at: float | None = None

    async def refresh(self, pool: asyncpg.Pool) -> None:
        """Count the unsent rows (and the oldest one's age) unless that was done less than ``interval_s`` ago;
        the gauges follow. A failed count keeps the last figure."""
        now = time.monotonic()
        if self._counted_at is not None and now - self._counted_at < self.interval_s:
            return
        self._counted_at = now
        with contextlib.suppress(Exception), tracing.quiet():
            async with system_tx(pool) as conn:
                self.unsent, self.oldest_age_s = await outbox.backlog(conn)
            OUTBOX_BACKLOG.set(self.unsent)
            OUTBOX_AGE.set(self.oldest_age_s)

    async def watch(self, pool: asyncpg.Pool, stop: asyncio.Event) -> None:
        """Recount every ``interval_s`` until ``stop`` is set (the relay may be stuck connecting to NATS)."""
        while not stop.is_set():
            await self.refresh(pool)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), max(self.interval_s, 0.05))

    def admit(self) -> None:
        """Refuse a new write while the backlog is over the bound."""
        if self.limit and self.unsent > self.limit:
            raise Unavailable(
                f"{self.unsent} events wait to be published (more than ENGRAM_MAX_OUTBOX_BACKLOG={self.limit}); "
                "nothing was written, try again later",
                code="backlog_full",
                retry_after_s=RETRY_AFTER_S,
            )
