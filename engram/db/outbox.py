"""Outbox rows: written in the same transaction as the change they announce, published by the relay.

Rows hold a finished subject and envelope; building them from an event is ``engram.events.outbox``'s job."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import asyncpg

NOTIFY_CHANNEL = "engram_outbox"


@dataclass(frozen=True)
class Pending:
    """An unsent row, claimed by a relay."""

    id: int
    event_id: str
    subject: str
    envelope: str  # the CloudEvent as JSON text


async def add(
    conn: asyncpg.Connection, *, tenant_id: str, event_id: str, subject: str, envelope: dict[str, Any]
) -> None:
    """Queue one envelope under ``subject``; the relay is woken when the transaction commits. One statement: the
    row and its ``pg_notify`` (PostgreSQL folds a transaction's identical notifications into one)."""
    await conn.execute(
        f"""WITH queued AS (INSERT INTO outbox (tenant_id, event_id, subject, envelope)
                            VALUES ($1, $2, $3, $4::jsonb) RETURNING 1)
            SELECT pg_notify('{NOTIFY_CHANNEL}', '') FROM queued""",
        tenant_id,
        event_id,
        subject,
        json.dumps(envelope),
    )


@dataclass(frozen=True)
class Row:
    """One envelope to queue (``add``)."""

    tenant_id: str
    event_id: str
    subject: str
    envelope: dict[str, Any]


async def add_many(conn: asyncpg.Connection, rows: list[Row]) -> None:
    """``add`` for many envelopes in one statement, queued in the order given (the relay publishes by id), the
    relay woken once when the transaction commits."""
    if not rows:
        return
    await conn.execute(
        f"""WITH queued AS (INSERT INTO outbox (tenant_id, event_id, subject, envelope)
                            SELECT t, e, s, v::jsonb
                            FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[]) WITH ORDINALITY
                                 AS r(t, e, s, v, n)
                            ORDER BY n
                            RETURNING 1)
            SELECT pg_notify('{NOTIFY_CHANNEL}', '') WHERE EXISTS (SELECT FROM queued)""",
        [row.tenant_id for row in rows],
        [row.event_id for row in rows],
        [row.subject for row in rows],
        [json.dumps(row.envelope) for row in rows],
    )


async def claim(conn: asyncpg.Connection, subject_prefix: str, limit: int) -> list[Pending]:
    """Lock the oldest unsent rows under ``subject_prefix`` and mark them sent, in one statement; other relays
    skip them (any number may run). The mark holds only if the transaction commits: publish inside it, and a
    failed publish rolls the mark back (the rows stay unsent, their ``attempts`` unchanged)."""
    rows = await conn.fetch(
        """WITH next AS (SELECT id FROM outbox WHERE sent_at IS NULL AND starts_with(subject, $1)
                         ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
           UPDATE outbox o SET sent_at = now(), attempts = o.attempts + 1 FROM next WHERE o.id = next.id
           RETURNING o.id, o.event_id, o.subject, o.envelope::text AS envelope""",
        subject_prefix + ".",
        limit,
    )
    return sorted((Pending(r["id"], str(r["event_id"]), r["subject"], r["envelope"]) for r in rows), key=_by_id)


def _by_id(row: Pending) -> int:
    return row.id


async def backlog(conn: asyncpg.Connection) -> tuple[int, float]:
    """Unsent rows and the age in seconds of the oldest (needs system scope)."""
    row: Any = await conn.fetchrow(
        "SELECT count(*) AS n, coalesce(extract(epoch FROM now() - min(created_at)), 0) AS age "
        "FROM outbox WHERE sent_at IS NULL"
    )
    return int(row["n"]), float(row["age"])


async def prune_sent(conn: asyncpg.Connection, older_than_hours: int, batch: int) -> int:
    """Delete at most ``batch`` rows published more than ``older_than_hours`` ago, oldest first; rows another
    sweep holds are skipped (system scope). Returns how many went."""
    status = await conn.execute(
        """WITH old AS (SELECT id FROM outbox WHERE sent_at < now() - make_interval(hours => $1)
                        ORDER BY sent_at LIMIT $2 FOR UPDATE SKIP LOCKED)
           DELETE FROM outbox o USING old WHERE o.id = old.id""",
        older_than_hours,
        batch,
    )
    return int(status.split()[-1])
