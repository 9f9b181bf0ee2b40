"""The token bucket behind rate limits, on a fake clock."""

from __future__ import annotations

import pytest

from engram.domain.ratelimit import RateLimiter, retry_after_header, validate_limits
from engram.errors import ValidationFailed


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_burst_then_refill_per_principal_and_route() -> None:
    clock = Clock()
    limiter = RateLimiter(clock=clock)
    assert [limiter.take("p1", "remember", 3) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limiter.take("p1", "remember", 3)
    assert wait == pytest.approx(20.0)  # 3 a minute: one token every 20 s
    assert retry_after_header(wait) == "20"
    assert limiter.take("p2", "remember", 3) == 0.0  # another principal has its own bucket
    assert limiter.take("p1", "recall", 3) == 0.0  # and another route too
    clock.now += 20.0
    assert limiter.take("p1", "remember", 3) == 0.0
    assert limiter.take("p1", "remember", 3) > 0


def test_a_changed_limit_takes_effect() -> None:
    limiter = RateLimiter(clock=Clock())
    assert limiter.take("p", "remember", 1) == 0.0
    assert limiter.take("p", "remember", 1) > 0
    assert limiter.take("p", "remember", 5) == 0.0  # raised: a fresh bucket


def test_limits_are_validated() -> None:
    assert validate_limits({"remember": 10}) == {"remember": 10}
    with pytest.raises(ValidationFailed, match="unknown rate-limited routes"):
        validate_limits({"teleport": 10})
    with pytest.raises(ValidationFailed):
        validate_limits({"recall": 0})


def test_a_batch_costs_one_token_per_write_and_never_more_than_the_bucket() -> None:
    now = [0.0]
    limiter = RateLimiter(clock=lambda: now[0])
    assert limiter.take("p", "remember", 10, cost=7) == 0.0
    assert limiter.take("p", "remember", 10, cost=7) > 0  # 3 left: refused
    assert limiter.take("p", "remember", 10, cost=3) == 0.0  # positive control
    now[0] += 60.0  # refilled
    assert limiter.take("p", "remember", 10, cost=500) == 0.0  # above the limit: the whole bucket
    assert limiter.take("p", "remember", 10) > 0
