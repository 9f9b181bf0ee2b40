"""The outbox as tests see it: the events a write left there, and handing them to a consumer without NATS.

``await deliver(owner_pool, EmbedderService(...).handle, tenant=ctx, types=["memory.created"])`` reads the
matching outbox rows and calls the consumer's batch handler with them, as the relay and JetStream would.
Types are named as consumers subscribe to them (``memory.created``, without the ``engram.`` prefix).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import asyncpg

from engram.domain.models import CallerContext
from engram.events.envelope import Event

Handler = Callable[[list[Event]], Awaitable[dict[str, Exception]]]


async def outbox_envelopes(
    owner_pool: asyncpg.Pool,
    *,
    tenant: CallerContext | str | None = None,
    types: Sequence[str] = (),
    subjects: Sequence[str] = (),
    unsent: bool = False,
) -> list[dict[str, Any]]:
    """The envelopes in the outbox matching every filter given: grouped by subject in the order ``subjects``
    names them, oldest first within a subject (oldest first overall without ``subjects``)."""
    tenant_id = tenant.tenant_id if isinstance(tenant, CallerContext) else tenant
    async with owner_pool.acquire() as conn:
        rows = await conn.fetch(
            """SELECT envelope FROM outbox
               WHERE ($1::uuid IS NULL OR tenant_id = $1::uuid)
                 AND (cardinality($2::text[]) = 0 OR envelope->>'type' = ANY($2::text[]))
                 AND (cardinality($3::text[]) = 0 OR envelope->>'subject' = ANY($3::text[]))
                 AND (NOT $4 OR sent_at IS NULL)
               ORDER BY array_position($3::text[], envelope->>'subject'), id""",
            tenant_id,
            [f"engram.{t}" for t in types],
            list(subjects),
            unsent,
        )
    return [json.loads(r["envelope"]) for r in rows]


async def outbox_events(
    owner_pool: asyncpg.Pool,
    *,
    tenant: CallerContext | str | None = None,
    types: Sequence[str] = (),
    subjects: Sequence[str] = (),
    unsent: bool = False,
) -> list[Event]:
    """``outbox_envelopes`` decoded as the consumers receive them."""
    return [
        Event.decode(e)
        for e in await outbox_envelopes(owner_pool, tenant=tenant, types=types, subjects=subjects, unsent=unsent)
    ]


async def deliver(
    owner_pool: asyncpg.Pool,
    handle: Handler,
    *,
    tenant: CallerContext | str | None = None,
    types: Sequence[str] = (),
    subjects: Sequence[str] = (),
    unsent: bool = False,
) -> dict[str, Exception]:
    """Hand the matching outbox events to a consumer's batch handler in one batch; its failures by event id.
    Fails when nothing matches: a delivery of nothing would let a test pass without exercising the consumer."""
    events = await outbox_events(owner_pool, tenant=tenant, types=types, subjects=subjects, unsent=unsent)
    assert events, f"no outbox events for tenant={tenant!r} types={list(types)} subjects={list(subjects)}"
    return await handle(events)
