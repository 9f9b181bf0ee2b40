"""A background pass that runs at once and then every ``interval_s`` until its process stops: the ingest
sweep, the inventory of the gauges, the promotion sweep."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable


async def every(
    interval_s: float, stop: asyncio.Event, work: Callable[[], Awaitable[None]], what: str, log: logging.Logger
) -> None:
    """Run ``work`` until ``stop`` is set, waiting ``interval_s`` after each pass. A pass that fails is logged
    (``<what> failed; retrying in <n>s``, with its traceback) and the next one runs on time."""
    while not stop.is_set():
        try:
            await work()
        except Exception:
            log.exception("%s failed; retrying in %.0fs", what, interval_s)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval_s)
