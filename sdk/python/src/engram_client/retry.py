"""When a failed call is tried again, and after how long: one policy for the sync and the async client.

Retried:
- ``429 rate_limited``: always (the server refused it before doing anything);
- ``503 unavailable`` and a lost answer (a read timeout, a dropped connection): only for a request that is
  safe to repeat: reads, ``recall``/``search``/``classify``, ``remember`` (a repeat deduplicates), and any
  write sent with an ``Idempotency-Key``. Ingest may have committed a write whose answer was lost;
- a connection that could not be opened (refused, connect timeout): always, nothing was sent.

The wait is exponential with full jitter (``backoff_s · 2^(attempt-1)``, capped at ``max_backoff_s``), but
never shorter than the server's ``Retry-After``. A call stops retrying after ``max_attempts`` tries, or
when the next wait would take the time spent waiting past ``max_wait_s``; the last error is raised then.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import httpx

from engram_client.errors import RateLimited, Unavailable


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    """Tries in all, the first included; 1 turns retries off."""
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0
    max_wait_s: float = 60.0
    """The most time spent waiting between the tries of one call."""
    jitter: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def delay(self, attempt: int, error: BaseException, *, idempotent: bool, waited_s: float) -> float | None:
        """Seconds to wait before try ``attempt + 1`` after ``error`` ended try ``attempt``; None: give up."""
        if attempt >= self.max_attempts or not retryable(error, idempotent=idempotent):
            return None
        backoff = self.jitter.uniform(0, min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1)))
        server = getattr(error, "retry_after", None)
        wait = max(backoff, server) if server is not None else backoff
        if waited_s + wait > self.max_wait_s:
            return None
        return wait


NO_RETRIES = RetryPolicy(max_attempts=1)


def retryable(error: BaseException, *, idempotent: bool) -> bool:
    if isinstance(error, RateLimited):
        return True
    if isinstance(error, Unavailable):
        return idempotent
    if isinstance(error, httpx.ConnectError | httpx.ConnectTimeout):
        return True
    if isinstance(error, httpx.TransportError):
        return idempotent
    return False
