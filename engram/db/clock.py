"""The database's clock: decisions taken in a transaction use its time, not the process's."""

from __future__ import annotations

from datetime import datetime

import asyncpg


async def now(conn: asyncpg.Connection) -> datetime:
    """The start time of the current transaction (``now()``)."""
    value: datetime = await conn.fetchval("SELECT now()")
    return value
