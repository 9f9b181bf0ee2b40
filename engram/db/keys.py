"""API-key lookup for authentication: the one repository the gateway reads (issuing, listing and revoking
keys is the admin API's, in ``engram/db/identity.py``)."""

from __future__ import annotations

import asyncpg

from engram.db.pool import tenant_tx
from engram.domain.models import StoredKey


async def find(pool: asyncpg.Pool, key_id: str) -> StoredKey | None:
    """The key with this id, in whichever tenant it lives (the key_lookup policy allows this one row); the
    caller checks the presented secret against its salted hash."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT set_config('app.api_key_id', $1, true)", key_id)
        key = await conn.fetchrow(
            "SELECT tenant_id, principal_id, salt, secret_hash, scopes, revoked_at, "
            "coalesce(last_used_at < now() - interval '1 minute', true) AS stale FROM api_keys WHERE id = $1",
            key_id,
        )
        if key is None:
            return None
        await conn.execute("SELECT set_config('app.tenant_id', $1, true)", str(key["tenant_id"]))
        principal = await conn.fetchrow(
            "SELECT type, disabled_at, platform_admin FROM principals WHERE id = $1", key["principal_id"]
        )
        if principal is None:
            return None
    return StoredKey(
        key_id=key_id,
        tenant_id=str(key["tenant_id"]),
        principal_id=str(key["principal_id"]),
        principal_type=principal["type"],
        salt=bytes(key["salt"]),
        secret_hash=bytes(key["secret_hash"]),
        scopes=tuple(key["scopes"]),
        usable=key["revoked_at"] is None and principal["disabled_at"] is None,
        last_used_stale=bool(key["stale"]),
        platform_admin=bool(principal["platform_admin"]),
    )


async def touch(pool: asyncpg.Pool, tenant_id: str, key_id: str) -> None:
    """Record a successful use (call it only after the secret matched)."""
    async with tenant_tx(pool, tenant_id) as conn:
        await conn.execute("UPDATE api_keys SET last_used_at = now() WHERE id = $1", key_id)
