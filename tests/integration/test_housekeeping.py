"""The sweep's housekeeping: published outbox rows past ENGRAM_OUTBOX_RETENTION_HOURS and inbox rows past
ENGRAM_INBOX_RETENTION_DAYS are deleted, a bounded batch per pass, oldest first; unsent and recent rows stay."""

from __future__ import annotations

import uuid
from datetime import timedelta

import asyncpg
from prometheus_client import REGISTRY

from engram.config import Settings
from engram.domain.models import CallerContext
from services.ingest.trash import sweep


def _swept(outcome: str) -> float:
    return REGISTRY.get_sample_value("engram_sweep_items_total", {"outcome": outcome}) or 0.0


async def _outbox_row(conn: asyncpg.Connection, tenant_id: str, *, age: timedelta, sent: bool) -> str:
    event_id = str(uuid.uuid4())
    await conn.execute(
        "INSERT INTO outbox (tenant_id, event_id, subject, envelope, created_at, sent_at) "
        "VALUES ($1, $2, 'housekeeping.test', '{}'::jsonb, now() - $3::interval, "
        "CASE WHEN $4 THEN now() - $3::interval END)",
        tenant_id,
        event_id,
        age,
        sent,
    )
    return event_id


async def _inbox_row(conn: asyncpg.Connection, tenant_id: str, consumer: str, *, age: timedelta) -> str:
    event_id = str(uuid.uuid4())
    await conn.execute(
        "INSERT INTO consumer_inbox (tenant_id, consumer, event_id, processed_at) "
        "VALUES ($1, $2, $3, now() - $4::interval)",
        tenant_id,
        consumer,
        event_id,
        age,
    )
    return event_id


async def test_old_published_outbox_rows_and_old_inbox_rows_go_a_bounded_batch_per_pass(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings, tenant: CallerContext
) -> None:
    consumer = f"housekeeping_{uuid.uuid4().hex[:8]}"
    async with owner_pool.acquire() as conn:
        old_sent = [await _outbox_row(conn, tenant.tenant_id, age=timedelta(hours=48), sent=True) for _ in range(5)]
        recent_sent = [await _outbox_row(conn, tenant.tenant_id, age=timedelta(hours=1), sent=True) for _ in range(2)]
        old_unsent = [await _outbox_row(conn, tenant.tenant_id, age=timedelta(hours=72), sent=False) for _ in range(2)]
        old_inbox = [await _inbox_row(conn, tenant.tenant_id, consumer, age=timedelta(days=50)) for _ in range(5)]
        recent_inbox = [await _inbox_row(conn, tenant.tenant_id, consumer, age=timedelta(days=40)) for _ in range(2)]

    async def left() -> tuple[set[str], set[str]]:
        async with owner_pool.acquire() as conn:
            events = {
                str(r["event_id"])
                for r in await conn.fetch("SELECT event_id FROM outbox WHERE tenant_id = $1", tenant.tenant_id)
            }
            inbox = {
                str(r["event_id"])
                for r in await conn.fetch("SELECT event_id FROM consumer_inbox WHERE consumer = $1", consumer)
            }
        return events, inbox

    configured = settings.model_copy(update={"outbox_retention_hours": 24, "inbox_retention_days": 45})
    counted = _swept("outbox"), _swept("inbox")
    first = await sweep(app_pool, configured, prune_batch=3)
    assert (first.outbox, first.inbox) == (3, 3)  # the bound, though more are due
    assert (_swept("outbox") - counted[0], _swept("inbox") - counted[1]) == (3, 3)
    events, inbox = await left()
    assert len(set(old_sent) & events) >= 2 and len(set(old_inbox) & inbox) >= 2  # the rest wait for the next pass

    while (report := await sweep(app_pool, configured, prune_batch=3)).outbox or report.inbox:
        pass
    events, inbox = await left()
    assert not set(old_sent) & events and not set(old_inbox) & inbox
    assert set(recent_sent) | set(old_unsent) <= events  # recent, or never published: kept
    assert set(recent_inbox) <= inbox
    async with owner_pool.acquire() as conn:  # old unsent rows would show in other tests' backlog gauges
        await conn.execute("DELETE FROM outbox WHERE event_id = ANY($1::uuid[])", old_unsent)
