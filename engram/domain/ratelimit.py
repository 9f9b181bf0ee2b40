"""Rate limits: a token bucket per (principal, route class), refilled continuously.

A limit of N per minute allows a burst of N and then N/60 requests a second. A refused request learns how
long to wait (Retry-After)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from engram.errors import ValidationFailed

LIMITED_ROUTES = ("remember", "recall", "feedback", "review", "bulk")


@dataclass
class Bucket:
    capacity: float
    per_second: float
    tokens: float
    updated: float


@dataclass
class RateLimiter:
    """In-process buckets (each gateway replica limits on its own), at most ``max_buckets`` of them: the least
    recently used bucket is dropped to make room for a new one."""

    clock: Callable[[], float] = time.monotonic
    max_buckets: int = 100_000
    _buckets: dict[tuple[str, str], Bucket] = field(default_factory=dict)

    def take(self, principal_id: str, route: str, per_minute: int, cost: int = 1) -> float:
        """0 when allowed (``cost`` tokens taken: a batch of n writes costs n); otherwise the seconds to wait before
        it would be. A cost above the limit takes the whole bucket, so it waits for a full one."""
        now = self.clock()
        key = (principal_id, route)
        bucket = self._buckets.pop(key, None)  # re-inserted below: the dict's order is the order of last use
        capacity, rate = float(per_minute), per_minute / 60.0
        if bucket is None or bucket.capacity != capacity:
            while len(self._buckets) >= self.max_buckets:  # the least recently used goes first
                del self._buckets[next(iter(self._buckets))]
            bucket = Bucket(capacity, rate, capacity, now)
        self._buckets[key] = bucket
        bucket.tokens = min(bucket.capacity, bucket.tokens + (now - bucket.updated) * bucket.per_second)
        bucket.updated = now
        needed = min(float(max(cost, 1)), bucket.capacity)
        if bucket.tokens >= needed:
            bucket.tokens -= needed
            return 0.0
        return (needed - bucket.tokens) / bucket.per_second


def retry_after_header(wait_s: float) -> str:
    return str(max(1, math.ceil(wait_s)))


def validate_limits(limits: dict[str, int], ceiling: int = 1_000_000) -> dict[str, int]:
    """A tenant's own limits: known route classes, each from 1 a minute to the platform ``ceiling``
    (``ENGRAM_RATE_LIMIT_CEILING_PER_MINUTE``); a value above it is refused, naming the ceiling."""
    unknown = sorted(set(limits) - set(LIMITED_ROUTES))
    if unknown:
        raise ValidationFailed(
            f"unknown rate-limited routes {unknown}; known: {', '.join(LIMITED_ROUTES)}", field="rate_limits"
        )
    for route, value in limits.items():
        if not 1 <= value <= ceiling:
            raise ValidationFailed(
                f"rate limit for {route} must be 1–{ceiling} per minute (the platform ceiling)", field="rate_limits"
            )
    return dict(limits)


def clamp(per_minute: int, ceiling: int) -> int:
    """A tenant's limit held to the platform ceiling where it is applied (a limit stored before the ceiling was
    lowered)."""
    return min(per_minute, ceiling)
