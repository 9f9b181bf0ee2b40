"""Rate limits: a token bucket per (principal, route class), refilled continuously.

A limit of N per minute allows a burst of N and then N/60 requests a second. A refused request learns how
long to wait (Retry-After)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from engram.errors import ValidationFailed

LIMITED_ROUTES = ("remember", "recall", "feedback")


@dataclass
class Bucket:
    capacity: float
    per_second: float
    tokens: float
    updated: float


@dataclass
class RateLimiter:
    """In-process buckets (each gateway replica limits on its own)."""

    clock: Callable[[], float] = time.monotonic
    max_buckets: int = 100_000
    _buckets: dict[tuple[str, str], Bucket] = field(default_factory=dict)

    def take(self, principal_id: str, route: str, per_minute: int, cost: int = 1) -> float:
        """0 when allowed (``cost`` tokens taken: a batch of n writes costs n); otherwise the seconds to wait before
        it would be. A cost above the limit takes the whole bucket, so it waits for a full one."""
        now = self.clock()
        key = (principal_id, route)
        bucket = self._buckets.get(key)
        capacity, rate = float(per_minute), per_minute / 60.0
        if bucket is None or bucket.capacity != capacity:
            if len(self._buckets) >= self.max_buckets:
                self._buckets.clear()  # a crude bound on memory; buckets refill quickly anyway
            bucket = self._buckets[key] = Bucket(capacity, rate, capacity, now)
        bucket.tokens = min(bucket.capacity, bucket.tokens + (now - bucket.updated) * bucket.per_second)
        bucket.updated = now
        needed = min(float(max(cost, 1)), bucket.capacity)
        if bucket.tokens >= needed:
            bucket.tokens -= needed
            return 0.0
        return (needed - bucket.tokens) / bucket.per_second


def retry_after_header(wait_s: float) -> str:
    return str(max(1, math.ceil(wait_s)))


def validate_limits(limits: dict[str, int]) -> dict[str, int]:
    unknown = sorted(set(limits) - set(LIMITED_ROUTES))
    if unknown:
        raise ValidationFailed(
            f"unknown rate-limited routes {unknown}; known: {', '.join(LIMITED_ROUTES)}", field="rate_limits"
        )
    for route, value in limits.items():
        if not 1 <= value <= 1_000_000:
            raise ValidationFailed(f"rate limit for {route} must be 1–1000000 per minute", field="rate_limits")
    return dict(limits)
