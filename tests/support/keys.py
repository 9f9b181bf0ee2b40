"""API keys for tests: the type of the ``make_key`` fixture, and principals with a key, issued through the real
identity code."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import asyncpg

from engram.db import identity
from tests.support.gateway import Headers

KeyMaker = Callable[..., Awaitable[str]]
"""``await make_key(ctx, scopes)`` → an Authorization header value (``Bearer …``) for that principal."""


async def principal_with_key(
    app_pool: asyncpg.Pool,
    tenant_id: str,
    name: str,
    kind: str = "user",
    scopes: Sequence[str] = ("read", "write"),
) -> tuple[str, Headers]:
    """A new principal of the tenant (a member of its default workspace) and the headers of a key it holds with
    ``scopes``."""
    principal = await identity.create_principal(app_pool, tenant_id, name, kind)
    issued = await identity.create_key(app_pool, tenant_id, principal, list(scopes), name)
    return principal, {"authorization": f"Bearer {issued.key}"}
