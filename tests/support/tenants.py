"""Tenants for tests, made directly in the database as the owner role (no API involved)."""

from __future__ import annotations

import uuid

import asyncpg

from engram.domain.models import CallerContext


async def create_tenant(owner_pool: asyncpg.Pool, principal_type: str = "user") -> CallerContext:
    """A fresh tenant with a default workspace and one principal (created as the owner role)."""
    tenant_id, workspace_id, principal_id = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    async with owner_pool.acquire() as conn, conn.transaction():
        await conn.execute("INSERT INTO tenants (id, name) VALUES ($1, $2)", tenant_id, f"t-{tenant_id}")
        await conn.execute(
            "INSERT INTO workspaces (tenant_id, id, name) VALUES ($1, $2, 'default')", tenant_id, workspace_id
        )
        await conn.execute(
            "INSERT INTO principals (tenant_id, id, name, type) VALUES ($1, $2, 'tester', $3)",
            tenant_id,
            principal_id,
            principal_type,
        )
        await conn.execute(
            "INSERT INTO workspace_members (tenant_id, workspace_id, principal_id, role) VALUES ($1, $2, $3, 'member')",
            tenant_id,
            workspace_id,
            principal_id,
        )
    return CallerContext(
        tenant_id=str(tenant_id),
        principal_id=str(principal_id),
        principal_type=principal_type,
        scopes=frozenset({"read", "write"}),
        request_id=f"req-{uuid.uuid4().hex[:8]}",
    )
