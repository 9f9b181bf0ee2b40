"""Tenants, workspaces, principals, memberships, API keys (issued, listed, revoked) and tenant configuration.
The key lookup that authentication needs is ``engram/db/keys.py``."""

from __future__ import annotations

import json
import uuid
from typing import Any

import asyncpg

from engram.db.pool import tenant_tx
from engram.db.violations import unique
from engram.domain.keys import IssuedKey, issue_key
from engram.domain.models import ApiKeyInfo, TenantConfig


async def create_key(pool: asyncpg.Pool, tenant_id: str, principal_id: str, scopes: list[str], label: str) -> IssuedKey:
    issued = issue_key()
    async with tenant_tx(pool, tenant_id) as conn:
        await conn.execute(
            "INSERT INTO api_keys (tenant_id, id, principal_id, salt, secret_hash, scopes, label) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7)",
            tenant_id,
            issued.key_id,
            principal_id,
            issued.salt,
            issued.secret_hash,
            scopes,
            label,
        )
    return issued


async def list_keys(pool: asyncpg.Pool, tenant_id: str) -> list[ApiKeyInfo]:
    async with tenant_tx(pool, tenant_id) as conn:
        rows = await conn.fetch(
            "SELECT id, principal_id, scopes, label, created_at, revoked_at, last_used_at FROM api_keys "
            "WHERE tenant_id = $1 ORDER BY created_at",
            tenant_id,
        )
    return [
        ApiKeyInfo(
            r["id"],
            str(r["principal_id"]),
            list(r["scopes"]),
            r["label"],
            r["created_at"],
            r["revoked_at"],
            r["last_used_at"],
        )
        for r in rows
    ]


async def revoke_key(pool: asyncpg.Pool, tenant_id: str, key_id: str) -> bool:
    async with tenant_tx(pool, tenant_id) as conn:
        status = await conn.execute(
            "UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 AND tenant_id = $2",
            key_id,
            tenant_id,
        )
    return str(status).endswith(" 1")


async def create_tenant(pool: asyncpg.Pool, name: str) -> str:
    """A tenant with its default workspace; ``Conflict`` (``name_taken``) when the name is taken."""
    tenant_id = str(uuid.uuid4())
    async with tenant_tx(pool, tenant_id) as conn:
        with unique(f"a tenant named {name!r} exists", field="name", code="name_taken"):
            await conn.execute("INSERT INTO tenants (id, name) VALUES ($1, $2)", tenant_id, name)
        await conn.execute(
            "INSERT INTO workspaces (tenant_id, id, name) VALUES ($1, $2, 'default')", tenant_id, uuid.uuid4()
        )
    return tenant_id


async def create_workspace(pool: asyncpg.Pool, tenant_id: str, name: str) -> str:
    """``Conflict`` (``name_taken``) when the tenant has a workspace of that name."""
    workspace_id = str(uuid.uuid4())
    async with tenant_tx(pool, tenant_id) as conn:
        with unique(f"a workspace named {name!r} exists", field="name", code="name_taken"):
            await conn.execute(
                "INSERT INTO workspaces (tenant_id, id, name) VALUES ($1, $2, $3)", tenant_id, workspace_id, name
            )
    return workspace_id


async def create_principal(
    pool: asyncpg.Pool, tenant_id: str, name: str, principal_type: str, trusted: bool = False
) -> str:
    """A principal, made a ``member`` of the tenant's default workspace so it can start writing at once."""
    principal_id = str(uuid.uuid4())
    async with tenant_tx(pool, tenant_id) as conn:
        await conn.execute(
            "INSERT INTO principals (tenant_id, id, name, type, trusted) VALUES ($1, $2, $3, $4, $5)",
            tenant_id,
            principal_id,
            name,
            principal_type,
            trusted,
        )
        await conn.execute(
            "INSERT INTO workspace_members (tenant_id, workspace_id, principal_id, role) "
            "SELECT $1, id, $2, 'member' FROM workspaces WHERE name = 'default'",
            tenant_id,
            principal_id,
        )
    return principal_id


async def add_member(pool: asyncpg.Pool, tenant_id: str, workspace_id: str, principal_id: str, role: str) -> None:
    async with tenant_tx(pool, tenant_id) as conn:
        await conn.execute(
            """INSERT INTO workspace_members (tenant_id, workspace_id, principal_id, role) VALUES ($1, $2, $3, $4)
               ON CONFLICT (workspace_id, principal_id) DO UPDATE SET role = EXCLUDED.role""",
            tenant_id,
            workspace_id,
            principal_id,
            role,
        )


async def tenant_exists(pool: asyncpg.Pool, tenant_id: str) -> bool:
    async with tenant_tx(pool, tenant_id) as conn:
        return bool(await conn.fetchval("SELECT true FROM tenants WHERE id = $1", tenant_id))


async def principal_exists(pool: asyncpg.Pool, tenant_id: str, principal_id: str) -> bool:
    async with tenant_tx(pool, tenant_id) as conn:
        return bool(await conn.fetchval("SELECT true FROM principals WHERE id = $1", principal_id))


async def principal_type(pool: asyncpg.Pool, tenant_id: str, principal_id: str) -> str | None:
    async with tenant_tx(pool, tenant_id) as conn:
        value = await conn.fetchval("SELECT type FROM principals WHERE id = $1", principal_id)
    return str(value) if value else None


async def workspace_exists(pool: asyncpg.Pool, tenant_id: str, workspace_id: str) -> bool:
    async with tenant_tx(pool, tenant_id) as conn:
        return bool(await conn.fetchval("SELECT true FROM workspaces WHERE id = $1", workspace_id))


async def tenant_config(pool: asyncpg.Pool, tenant_id: str) -> tuple[dict[str, Any], int]:
    """The tenant's configuration and its version (empty and 0 when never set)."""
    async with tenant_tx(pool, tenant_id) as conn:
        row = await conn.fetchrow("SELECT config, version FROM tenant_config WHERE tenant_id = $1", tenant_id)
    if row is None:
        return {}, 0
    return json.loads(row["config"]), int(row["version"])


async def merge_tenant_config(
    pool: asyncpg.Pool, tenant_id: str, patch: dict[str, Any], actor_id: str
) -> tuple[dict[str, Any], int]:
    """Merge ``patch`` into the top level of the tenant's configuration; returns the new config and version."""
    async with tenant_tx(pool, tenant_id) as conn:
        row = await conn.fetchrow(
            """INSERT INTO tenant_config (tenant_id, config, updated_by) VALUES ($1, $2::jsonb, $3)
               ON CONFLICT (tenant_id) DO UPDATE SET config = tenant_config.config || EXCLUDED.config,
                   version = tenant_config.version + 1, updated_at = now(), updated_by = EXCLUDED.updated_by
               RETURNING config, version""",
            tenant_id,
            json.dumps(patch),
            actor_id,
        )
    return json.loads(row["config"]), int(row["version"])


async def tenant_public(pool: asyncpg.Pool, tenant_id: str) -> bool:
    async with tenant_tx(pool, tenant_id) as conn:
        return bool(await conn.fetchval("SELECT public_enabled FROM tenants WHERE id = $1", tenant_id))


async def full_config(pool: asyncpg.Pool, tenant_id: str) -> TenantConfig:
    """The tenant's configuration, its version and whether its public items are shared."""
    config, version = await tenant_config(pool, tenant_id)
    return TenantConfig(tenant_id, config, version, await tenant_public(pool, tenant_id))


async def set_tenant_public(pool: asyncpg.Pool, tenant_id: str, enabled: bool) -> None:
    """Whether the tenant's ``public`` items are readable by callers of every tenant."""
    async with tenant_tx(pool, tenant_id) as conn:
        await conn.execute("UPDATE tenants SET public_enabled = $2 WHERE id = $1", tenant_id, enabled)


async def config_value(conn: asyncpg.Connection, key: str) -> Any:
    """One top-level value of the current tenant's configuration (None when unset), inside a tenant transaction."""
    value = await conn.fetchval("SELECT config->$1 FROM tenant_config", key)
    return json.loads(value) if value is not None else None
