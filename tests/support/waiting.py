"""Waiting for a condition with a deadline: the one polling loop of the test suite.

``await eventually(check)`` calls ``check`` (sync or async) until it returns something truthy and returns that
value; when ``timeout`` runs out it fails with ``message`` and the last value seen, so a condition that never
comes true fails the test instead of hanging it. ``eventually_blocking`` is the same for tests that are not
coroutines (the e2e tests drive a subprocess stack with blocking clients).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

Check = Callable[[], T | Awaitable[T]]


class _Poll:
    """One wait: its deadline, the last value or error seen, and the failure it ends with."""

    def __init__(self, timeout: float, message: str, ignoring: tuple[type[BaseException], ...]) -> None:
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.message = message
        self.ignoring = ignoring
        self.last: object = None

    def expired(self) -> bool:
        return time.monotonic() > self.deadline

    def failure(self) -> AssertionError:
        return AssertionError(f"{self.message} (not within {self.timeout:g}s; last value: {self.last!r})")


async def eventually(
    check: Check[T],
    timeout: float = 20.0,  # noqa: ASYNC109 (a polling deadline, not a call to cancel)
    interval: float = 0.05,
    message: str = "condition not met in time",
    ignoring: tuple[type[BaseException], ...] = (),
) -> T:
    """Poll ``check`` until its value is truthy and return it; an exception in ``ignoring`` counts as not yet."""
    poll = _Poll(timeout, message, ignoring)
    while True:
        try:
            value = check()
            if inspect.isawaitable(value):
                value = await value
        except ignoring as error:
            poll.last = error
        else:
            if value:
                return value  # type: ignore[return-value]
            poll.last = value
        if poll.expired():
            raise poll.failure()
        await asyncio.sleep(interval)


def eventually_blocking(
    check: Callable[[], T],
    timeout: float = 60.0,
    interval: float = 0.1,
    message: str = "condition not met in time",
    ignoring: tuple[type[BaseException], ...] = (),
) -> T:
    """``eventually`` for a test that is not a coroutine: sleeps between calls instead of awaiting."""
    poll = _Poll(timeout, message, ignoring)
    while True:
        try:
            value = check()
        except ignoring as error:
            poll.last = error
        else:
            if value:
                return value
            poll.last = value
        if poll.expired():
            raise poll.failure()
        time.sleep(interval)
