"""Rate limits per principal and route class, from tenant config or the defaults in Settings."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import asyncpg
from fastapi import Depends, Request

from engram.config import Settings
from engram.db import identity
from engram.domain.models import CallerContext
from engram.domain.ratelimit import RateLimiter
from engram.errors import RateLimited
from services.gateway.auth import Caller

CONFIG_TTL_S = 10.0


class Limits:
    def __init__(self, pool: asyncpg.Pool, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        self._pool = pool
        self._clock = clock
        self._limiter = RateLimiter(clock=clock)
        self._defaults = {
            "remember": settings.rate_limit_remember_per_minute,
            "recall": settings.rate_limit_recall_per_minute,
            "feedback": settings.rate_limit_feedback_per_minute,
        }
        self._tenant_limits: dict[str, tuple[float, dict[str, int]]] = {}

    async def per_minute(self, tenant_id: str, route: str) -> int:
        cached = self._tenant_limits.get(tenant_id)
        if cached is None or cached[0] < self._clock():
            config, _ = await identity.tenant_config(self._pool, tenant_id)
            cached = (self._clock() + CONFIG_TTL_S, dict(config.get("rate_limits", {})))
            self._tenant_limits[tenant_id] = cached
        return int(cached[1].get(route, self._defaults[route]))

    def forget(self, tenant_id: str) -> None:
        """Drop the cached limits of a tenant whose config just changed (this replica sees it at once)."""
        self._tenant_limits.pop(tenant_id, None)

    async def check(self, ctx: CallerContext, route: str) -> None:
        limit = await self.per_minute(ctx.tenant_id, route)
        wait = self._limiter.take(ctx.principal_id, route, limit)
        if wait > 0:
            raise RateLimited(f"rate limit of {limit} {route} requests a minute reached", retry_after_s=wait)


def limited(route: str) -> Callable[..., Awaitable[CallerContext]]:
    """A dependency: the authenticated caller, after its request was counted against ``route``'s limit."""

    async def dependency(request: Request, ctx: Caller) -> CallerContext:
        limits: Any = request.app.state.limits
        await limits.check(ctx, route)
        return ctx

    return dependency


RememberCaller = Annotated[CallerContext, Depends(limited("remember"))]
RecallCaller = Annotated[CallerContext, Depends(limited("recall"))]
FeedbackCaller = Annotated[CallerContext, Depends(limited("feedback"))]
