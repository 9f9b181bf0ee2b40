"""``every``: a background pass runs at once and again after each interval, a failing pass is logged and the next
one still runs, and setting ``stop`` ends the loop without waiting out the interval."""

from __future__ import annotations

import asyncio
import logging

import pytest

from engram.runtime.periodic import every


async def test_a_failed_pass_is_logged_and_the_next_one_runs(caplog: pytest.LogCaptureFixture) -> None:
    stop = asyncio.Event()
    passes: list[int] = []

    async def work() -> None:
        passes.append(len(passes))
        if len(passes) == 1:
            raise RuntimeError("first pass breaks")
        if len(passes) == 3:
            stop.set()

    with caplog.at_level(logging.ERROR):
        await asyncio.wait_for(every(0.01, stop, work, "tidy", logging.getLogger("test.periodic")), timeout=5)
    assert passes == [0, 1, 2]
    [record] = caplog.records
    assert record.getMessage() == "tidy failed; retrying in 0s" and record.exc_info is not None


async def test_stop_ends_the_wait_at_once() -> None:
    stop = asyncio.Event()
    passes = 0

    async def work() -> None:
        nonlocal passes
        passes += 1

    loop = asyncio.create_task(every(3600, stop, work, "hourly", logging.getLogger("test.periodic")))
    await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(loop, timeout=2)  # not an hour
    assert passes == 1
