"""The database's clock. Rules that compare with stored times (expiry, promotion gates) read the time here, so
they agree with the SQL that wrote those times."""

from __future__ import annotations

from datetime import datetime

import asyncpg


async def now(conn: asyncpg.Connection) -> datetime:
    """The transaction's start time, as ``now()`` in SQL."""
    value: datetime = await conn.fetchval("SELECT now()")
    return value


async def days_from_now(conn: asyncpg.Connection, days: int) -> datetime:
    """``days`` whole days after the transaction's start time."""
    value: datetime = await conn.fetchval("SELECT now() + make_interval(days => $1)", days)
    return value
