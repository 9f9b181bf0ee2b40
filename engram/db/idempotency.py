"""Idempotency keys: the answer a write got, kept per (tenant, principal, route, key) so that a retry replays
it. A key is claimed first thing in the write's transaction; the primary key makes a concurrent claim of the
same key wait until the first transaction ends, so only one of them writes."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg


@dataclass(frozen=True)
class Stored:
    request_hash: bytes
    answer: bytes


async def claim(
    conn: asyncpg.Connection, principal_id: str, route: str, key: str, request_hash: bytes, ttl_hours: int
) -> Stored | None:
    """Take the key for this transaction (None), or the request and answer stored under it by an earlier one
    (a concurrent claim waits for that transaction to end). A key older than ``ttl_hours`` that the sweep has
    not deleted yet is taken afresh."""
    await conn.execute(
        """DELETE FROM idempotency_keys WHERE tenant_id = engram_current_tenant() AND principal_id = $1
             AND route = $2 AND key = $3 AND created_at < now() - make_interval(hours => $4)""",
        principal_id,
        route,
        key,
        ttl_hours,
    )
    taken = await conn.fetchval(
        """INSERT INTO idempotency_keys (tenant_id, principal_id, route, key, request_hash, answer)
           VALUES (engram_current_tenant(), $1, $2, $3, $4, '') ON CONFLICT DO NOTHING RETURNING true""",
        principal_id,
        route,
        key,
        request_hash,
    )
    if taken:
        return None
    row = await conn.fetchrow(
        """SELECT request_hash, answer FROM idempotency_keys
           WHERE tenant_id = engram_current_tenant() AND principal_id = $1 AND route = $2 AND key = $3""",
        principal_id,
        route,
        key,
    )
    if row is None:  # deleted between the two statements (the sweep): take it again
        return await claim(conn, principal_id, route, key, request_hash, ttl_hours)
    return Stored(bytes(row["request_hash"]), bytes(row["answer"]))


async def store_answer(conn: asyncpg.Connection, principal_id: str, route: str, key: str, answer: bytes) -> None:
    """The answer of the write that claimed the key, in the same transaction."""
    await conn.execute(
        """UPDATE idempotency_keys SET answer = $4
           WHERE tenant_id = engram_current_tenant() AND principal_id = $1 AND route = $2 AND key = $3""",
        principal_id,
        route,
        key,
        answer,
    )


async def prune(conn: asyncpg.Connection, older_than_hours: int, batch: int) -> int:
    """Delete at most ``batch`` of the tenant's keys older than ``older_than_hours``, oldest first; rows another
    sweep (or a retry replaying them) holds are skipped. Returns how many went."""
    status = await conn.execute(
        """WITH old AS (SELECT principal_id, route, key FROM idempotency_keys
                        WHERE tenant_id = engram_current_tenant()
                          AND created_at < now() - make_interval(hours => $1)
                        ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
           DELETE FROM idempotency_keys k USING old
           WHERE k.tenant_id = engram_current_tenant() AND k.principal_id = old.principal_id
             AND k.route = old.route AND k.key = old.key""",
        older_than_hours,
        batch,
    )
    return int(status.split()[-1])
