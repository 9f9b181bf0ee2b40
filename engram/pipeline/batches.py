"""A consumer's batch in few transactions: the events of one tenant share one transaction, and a transaction that
fails is replayed one event per transaction, so an event that cannot be applied fails alone.

Every transaction costs round trips of its own (``BEGIN``, the tenant setting, ``COMMIT``) in the consumer and in
PostgreSQL; under a sustained load the embedder hands on its batches whole, so the consumers after it see full
batches too (docs/benchmarks.md, "Pipeline statements per memory"). Applying a batch in one transaction keeps
at-least-once delivery as it was: nothing is acknowledged before the transaction commits, each event's inbox row
is written in it, and a redelivered event finds its row and changes nothing. The events are applied in their
order, each seeing what the ones before it wrote, as when each had its own transaction.

A shared transaction holds its row locks (the classifier's item locks, the embedder's key-share locks) until it
commits, a batch's worth of rows instead of one: another consumer locking two of those rows in the other order
can now deadlock with it. PostgreSQL detects that and aborts one transaction; a shared one is replayed one event
per transaction, any other is retried as every failed event is, so nothing is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import asyncpg

from engram.db.pool import tenant_tx
from engram.events.envelope import Event
from engram.telemetry import tracing

log = logging.getLogger(__name__)

T = TypeVar("T")
# Applies one event in the caller's transaction; may return what to do once that transaction has committed (a
# metric that must count only what was stored).
Apply = Callable[[asyncpg.Connection, Event, T], Awaitable[Callable[[], None] | None]]


def by_tenant(jobs: list[tuple[Event, T]]) -> dict[str, list[tuple[Event, T]]]:
    """The jobs grouped by their event's tenant, each group in the order given."""
    groups: dict[str, list[tuple[Event, T]]] = {}
    for job in jobs:
        groups.setdefault(job[0].tenant_id, []).append(job)
    return groups


async def apply_per_tenant(pool: asyncpg.Pool, jobs: list[tuple[Event, T]], apply: Apply[T]) -> dict[str, Exception]:
    """Apply each job, the jobs of one tenant in one transaction (one job alone: its own); when a shared
    transaction fails, every job of it again in a transaction of its own. Returns the events that failed."""
    failures: dict[str, Exception] = {}
    for tenant_id, group in by_tenant(jobs).items():
        if len(group) > 1:
            try:
                await _apply_together(pool, tenant_id, group, apply)
                continue
            except Exception as exc:  # one of them, or the transaction: find out which, one by one
                log.info("a batch of %d events failed together (%r); applying them one by one", len(group), exc)
        for job in group:
            try:
                await _apply_together(pool, tenant_id, [job], apply)
            except Exception as exc:
                failures[job[0].id] = exc
    return failures


async def _apply_together(pool: asyncpg.Pool, tenant_id: str, group: list[tuple[Event, T]], apply: Apply[T]) -> None:
    after: list[Callable[[], None]] = []
    async with tenant_tx(pool, tenant_id) as conn:
        for event, value in group:
            with tracing.within(event.traceparent):
                done = await apply(conn, event, value)
            if done is not None:
                after.append(done)
    for done in after:
        done()
