"""Idempotency keys on the writes that take one: the first request with a key writes and stores its answer in
the same transaction; a retry with the same key and the same request gets that answer back and writes nothing;
the same key with another request is refused.

The answer is stored as the bytes the servicer encodes (its protobuf reply), so a replay is the very answer the
first request got, whatever changed since."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import asyncpg

from engram.db import idempotency
from engram.domain.models import CallerContext
from engram.domain.validation import validate_idempotency_key
from engram.errors import Conflict

T = TypeVar("T")


@dataclass(frozen=True)
class Once(Generic[T]):
    """A write's idempotency key: the route it scopes, the key, the request's fingerprint, and how the result
    is encoded for storage."""

    route: str
    key: str
    request_hash: bytes
    encode: Callable[[T], bytes]

    def __post_init__(self) -> None:
        validate_idempotency_key(self.key)


@dataclass(frozen=True)
class Replayed:
    """The stored answer of the earlier request with the same key."""

    answer: bytes


async def claim(conn: asyncpg.Connection, ctx: CallerContext, once: Once[T] | None, ttl_hours: int) -> Replayed | None:
    """Claim the key for this transaction (None: go on and write), or the earlier answer to replay. ``Conflict``
    (``idempotency_key_reused``) when the key was used with another request."""
    if once is None:
        return None
    stored = await idempotency.claim(conn, ctx.principal_id, once.route, once.key, once.request_hash, ttl_hours)
    if stored is None:
        return None
    if stored.request_hash != once.request_hash:
        raise Conflict(
            "this Idempotency-Key was used with another request; use a new key for a new request",
            field="Idempotency-Key",
            code="idempotency_key_reused",
        )
    return Replayed(stored.answer)


async def keep(conn: asyncpg.Connection, ctx: CallerContext, once: Once[T] | None, result: T) -> None:
    """Store the answer under the claimed key, before the write commits."""
    if once is not None:
        await idempotency.store_answer(conn, ctx.principal_id, once.route, once.key, once.encode(result))
