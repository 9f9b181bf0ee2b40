"""Rate limits per principal and route class: the tenant's own (the Admin service's ``RateLimits``, cached for
a few seconds) over the defaults in Settings.

Only a tenant's first request (and the first after its config changed on this replica) waits for the lookup;
concurrent ones share it. When the cached limits grow stale, the request that notices starts one refresh in
the background and every request goes on with the limits known so far, so a busy ingest never slows requests
here. Limits never fail a request: when ingest cannot answer, the tenant's last known limits stay in force (or
the defaults, for a tenant not seen yet) until the next attempt, one cache period later."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from engram.config import Settings
from engram.domain.models import CallerContext
from engram.domain.ratelimit import LIMITED_ROUTES, RateLimiter, clamp
from engram.errors import RateLimited
from engram.v1 import admin_pb2
from services.gateway.clients import Downstream

log = logging.getLogger(__name__)
CONFIG_TTL_S = 10.0
LOOKUP_TIMEOUT_S = 2.0
LIMIT = "engram_rate_limit"
"""The attribute of a handler naming its route class, which ``auth.caller`` counts each request against."""
Handler = TypeVar("Handler", bound=Callable[..., Any])


class Limits:
    def __init__(self, downstream: Downstream, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        self._downstream = downstream
        self._clock = clock
        self._limiter = RateLimiter(clock=clock)
        self._defaults = {
            "remember": settings.rate_limit_remember_per_minute,
            "recall": settings.rate_limit_recall_per_minute,
            "feedback": settings.rate_limit_feedback_per_minute,
            "review": settings.rate_limit_review_per_minute,
            "bulk": settings.rate_limit_bulk_per_minute,
        }
        self._ceiling = settings.rate_limit_ceiling_per_minute
        self._tenant_limits: dict[str, tuple[float, dict[str, int]]] = {}  # tenant → (fresh until, limits)
        self._refreshing: dict[str, asyncio.Task[dict[str, int]]] = {}

    async def per_minute(self, ctx: CallerContext, route: str) -> int:
        """The caller's tenant's limit for ``route``, in requests a minute."""
        cached = self._tenant_limits.get(ctx.tenant_id)
        if cached is None or cached[0] == float("-inf"):  # never seen, or forgotten: wait for the answer
            known = await self._refresh(ctx)
        else:
            known = cached[1]
            if cached[0] < self._clock():
                self._refresh(ctx)  # stale: refresh in the background, go on with what is known
        own = known.get(route)  # the tenant's own limit is held to the platform ceiling; the defaults are not
        return self._defaults[route] if own is None else clamp(int(own), self._ceiling)

    def _refresh(self, ctx: CallerContext) -> asyncio.Task[dict[str, int]]:
        """The tenant's one lookup in flight (started now if there is none), which updates the cache."""
        task = self._refreshing.get(ctx.tenant_id)
        if task is None:
            task = asyncio.create_task(self._store(ctx))
            self._refreshing[ctx.tenant_id] = task
            task.add_done_callback(lambda _: self._refreshing.pop(ctx.tenant_id, None))
        return task

    async def _store(self, ctx: CallerContext) -> dict[str, int]:
        cached = self._tenant_limits.get(ctx.tenant_id)
        known = await self._lookup(ctx, cached[1] if cached else {})
        self._tenant_limits[ctx.tenant_id] = (self._clock() + CONFIG_TTL_S, known)
        return known

    async def _lookup(self, ctx: CallerContext, last_known: dict[str, int]) -> dict[str, int]:
        try:
            reply = await self._downstream.call(
                self._downstream.admin.RateLimits, admin_pb2.RateLimitsRequest(), ctx, timeout_s=LOOKUP_TIMEOUT_S
            )
        except Exception as exc:  # any failure: keep limiting with what is known, never refuse the request
            log.warning("rate limits of tenant %s unavailable (%s); using the last known", ctx.tenant_id, exc)
            return last_known
        return dict(reply.limits.per_minute)

    def forget(self, tenant_id: str) -> None:
        """Expire the cached limits of a tenant whose config just changed (this replica asks again at once; they
        stay the last known should ingest not answer)."""
        cached = self._tenant_limits.get(tenant_id)
        if cached is not None:
            self._tenant_limits[tenant_id] = (float("-inf"), cached[1])

    async def check(self, ctx: CallerContext, route: str, cost: int = 1) -> None:
        """Count the request (``cost``: the writes it carries) against ``route``'s limit; ``RateLimited`` when
        spent."""
        limit = await self.per_minute(ctx, route)
        wait = self._limiter.take(ctx.principal_id, route, limit, cost)
        if wait > 0:
            raise RateLimited(f"rate limit of {limit} {route} requests a minute reached", retry_after_s=wait)


def limited(route: str) -> Callable[[Handler], Handler]:
    """A handler's decorator: every request to it is counted against ``route``'s limit, by ``auth.caller``
    right after the scope check (429 when spent, before the body is validated). Kept on the handler, not in
    the route's OpenAPI extra, which documents only the scope."""
    if route not in LIMITED_ROUTES:
        raise ValueError(f"unknown rate-limit route class {route!r}")

    def declare(handler: Handler) -> Handler:
        setattr(handler, LIMIT, route)
        return handler

    return declare
