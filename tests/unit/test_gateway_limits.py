"""The gateway's cache of tenant rate limits (services/gateway/limits.py): one lookup at a time per tenant,
and a stale cache refreshed behind the requests, never in front of them."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from engram.config import Settings
from engram.domain.models import CallerContext
from services.gateway.clients import Downstream
from services.gateway.limits import CONFIG_TTL_S, Limits

CTX = CallerContext(
    tenant_id="00000000-0000-4000-8000-0000000000e1",
    principal_id="p",
    principal_type="agent",
    scopes=frozenset({"read"}),
)


class SlowAdmin:
    """Stands in for the Downstream object: ``RateLimits`` answers what ``limits`` holds once ``release`` is set."""

    def __init__(self) -> None:
        self.calls = 0
        self.release = asyncio.Event()
        self.limits = {"remember": 7}
        self.admin = type("Stub", (), {"RateLimits": object()})()

    async def call(self, method: Any, request: Any, ctx: CallerContext, timeout_s: float = 0) -> Any:
        self.calls += 1
        await self.release.wait()
        reply = type("Reply", (), {})()
        reply.limits = type("Limits", (), {"per_minute": dict(self.limits)})()
        return reply


async def test_concurrent_first_requests_share_one_lookup() -> None:
    admin = SlowAdmin()
    limits = Limits(cast(Downstream, admin), Settings())
    waiting = [asyncio.create_task(limits.per_minute(CTX, "remember")) for _ in range(10)]
    await asyncio.sleep(0.05)
    assert admin.calls == 1 and not any(task.done() for task in waiting)  # the first requests wait for it
    admin.release.set()
    assert await asyncio.gather(*waiting) == [7] * 10
    assert admin.calls == 1


async def test_a_stale_cache_is_refreshed_in_the_background() -> None:
    now = [0.0]
    admin = SlowAdmin()
    admin.release.set()
    limits = Limits(cast(Downstream, admin), Settings(), clock=lambda: now[0])
    assert await limits.per_minute(CTX, "remember") == 7
    admin.release.clear()
    admin.limits = {"remember": 3}
    now[0] += CONFIG_TTL_S + 1
    answers = await asyncio.wait_for(asyncio.gather(*(limits.per_minute(CTX, "remember") for _ in range(5))), 1)
    assert answers == [7] * 5  # nobody waited for the refresh, which is still blocked
    assert admin.calls == 2  # one refresh for the five
    admin.release.set()
    await asyncio.sleep(0.05)
    assert await limits.per_minute(CTX, "remember") == 3 and admin.calls == 2


async def test_after_forget_the_next_request_waits_for_the_new_limits() -> None:
    admin = SlowAdmin()
    admin.release.set()
    limits = Limits(cast(Downstream, admin), Settings())
    assert await limits.per_minute(CTX, "remember") == 7
    admin.limits = {"remember": 2}
    limits.forget(CTX.tenant_id)  # this replica just changed the tenant's config
    assert await limits.per_minute(CTX, "remember") == 2
