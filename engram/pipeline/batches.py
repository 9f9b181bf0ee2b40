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

The rows a batch adds and nothing in its transaction reads back — each event's inbox row, its stage, its outbox
row, the classifier's receipt and audit row — are written a table at a time, one statement each for the whole
batch (docs/benchmarks.md, "Pipeline writes per batch"): the inbox rows first (``inbox.claim_many``: an event
recorded before, or by a concurrent replica, is skipped as ``inbox.claim`` made it be), the others queued in
``Writes`` while the events are applied and written just before the commit, in the order they were queued.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from uuid import UUID

import asyncpg

from engram.db import audit, classifications, inbox, outbox, stages
from engram.db.pool import tenant_tx
from engram.events.envelope import Event
from engram.events.outbox import Outbox
from engram.telemetry import tracing

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass
class Writes:
    """Rows a transaction adds that nothing in it reads back, queued while its events are applied and written
    before it commits (``flush``), one statement a table. What was queued is only in the database once flushed:
    a caller that reads a stage back asks ``stage_done`` too."""

    stage_rows: list[stages.StageRow] = field(default_factory=list)
    outbox_rows: list[outbox.Row] = field(default_factory=list)
    audit_rows: list[audit.AuditRow] = field(default_factory=list)
    receipts: list[classifications.Receipt] = field(default_factory=list)

    def stage(self, *, tenant_id: str, item_id: UUID | str, stage: str, status: str, detail: str = "") -> None:
        """``stages.record``, queued."""
        self.stage_rows.append(stages.StageRow(str(tenant_id), str(item_id), stage, status, detail))

    def stage_done(self, item_id: UUID | str, stage: str) -> bool:
        """Whether the last stage row queued for the item's ``stage`` records it done."""
        for row in reversed(self.stage_rows):
            if row.item_id == str(item_id) and row.stage == stage:
                return row.status == "done"
        return False

    def event(self, announcer: Outbox, event: Event) -> None:
        """``Outbox.add``, queued."""
        self.outbox_rows.append(outbox.Row(event.tenant_id, event.id, announcer.subject(event), event.to_json()))

    def audit(self, **row: Any) -> None:
        """``audit.record``, queued."""
        self.audit_rows.append(audit.AuditRow(**row))

    def receipt(self, **row: Any) -> None:
        """``classifications.add_receipt``, queued."""
        self.receipts.append(classifications.Receipt(**row))

    async def flush(self, conn: asyncpg.Connection) -> None:
        """Write what was queued, a statement a table, in the caller's transaction; the queues are emptied."""
        await stages.record_many(conn, self.stage_rows)
        await classifications.add_receipts(conn, self.receipts)
        await audit.record_many(conn, self.audit_rows)
        await outbox.add_many(conn, self.outbox_rows)
        self.stage_rows, self.receipts, self.audit_rows, self.outbox_rows = [], [], [], []


# Applies one event (its inbox row already recorded) in the caller's transaction, queueing in ``Writes`` the rows
# nothing reads back; may return what to do once that transaction has committed (a metric that must count only
# what was stored).
Apply = Callable[[asyncpg.Connection, Writes, Event, T], Awaitable[Callable[[], None] | None]]


def by_tenant(jobs: list[tuple[Event, T]]) -> dict[str, list[tuple[Event, T]]]:
    """The jobs grouped by their event's tenant, each group in the order given."""
    groups: dict[str, list[tuple[Event, T]]] = {}
    for job in jobs:
        groups.setdefault(job[0].tenant_id, []).append(job)
    return groups


async def apply_per_tenant(
    pool: asyncpg.Pool, consumer: str, jobs: list[tuple[Event, T]], apply: Apply[T]
) -> dict[str, Exception]:
    """Apply each job whose event ``consumer`` records in its inbox now (the others were handled before), the jobs
    of one tenant in one transaction (one job alone: its own); when a shared transaction fails, every job of it
    again in a transaction of its own. Returns the events that failed."""
    failures: dict[str, Exception] = {}
    for tenant_id, group in by_tenant(jobs).items():
        if len(group) > 1:
            try:
                await _apply_together(pool, consumer, tenant_id, group, apply)
                continue
            except Exception as exc:  # one of them, or the transaction: find out which, one by one
                log.info("a batch of %d events failed together (%r); applying them one by one", len(group), exc)
        for job in group:
            try:
                await _apply_together(pool, consumer, tenant_id, [job], apply)
            except Exception as exc:
                failures[job[0].id] = exc
    return failures


async def _apply_together(
    pool: asyncpg.Pool, consumer: str, tenant_id: str, group: list[tuple[Event, T]], apply: Apply[T]
) -> None:
    after: list[Callable[[], None]] = []
    writes = Writes()
    async with tenant_tx(pool, tenant_id) as conn:
        claimed = await inbox.claim_many(conn, consumer, tenant_id, [event.id for event, _ in group])
        for event, value in group:
            if event.id not in claimed:  # handled before, by a concurrent replica, or earlier in this batch
                continue
            claimed.discard(event.id)
            with tracing.within(event.traceparent):
                done = await apply(conn, writes, event, value)
            if done is not None:
                after.append(done)
        await writes.flush(conn)
    for done in after:
        done()
