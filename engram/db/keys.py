"""API-key lookup for authentication: the one repository the gateway reads (issuing, listing and revoking
keys is the admin API's, in ``engram/db/identity.py``)."""

from __future__ import annotations

import asyncpg

from engram.db.pool import tenant_tx
from engram.domain.models import StoredKey


async def find(pool: asyncpg.Pool, key_id: str) -> StoredKey | None:
    """The key with this id, in whichever tenant it lives (the key_lookup policy allows this one row), with its
    principal; the caller checks the presented secret against its salted hash. One statement
    (``engram_find_key``, migration 028), under the same policies as the reads it stands for."""
    async with pool.acquire() as conn:
        row = await conn.fetchrow("SELECT * FROM engram_find_key($1)", key_id)
    if row is None:
        return None
    return StoredKey(
        key_id=key_id,
        tenant_id=str(row["tenant_id"]),
        principal_id=str(row["principal_id"]),
        principal_type=row["principal_type"],
        salt=bytes(row["salt"]),
        secret_hash=bytes(row["secret_hash"]),
        scopes=tuple(row["scopes"]),
        usable=row["revoked_at"] is None and row["disabled_at"] is None,
        last_used_stale=bool(row["stale"]),
        platform_admin=bool(row["platform_admin"]),
    )


async def touch(pool: asyncpg.Pool, tenant_id: str, key_id: str) -> None:
    """Record a successful use (call it only after the secret matched)."""
    async with tenant_tx(pool, tenant_id) as conn:
        await conn.execute("UPDATE api_keys SET last_used_at = now() WHERE id = $1", key_id)
