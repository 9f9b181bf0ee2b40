"""The drain a consumer enters on shutdown: batches in flight finish, new ones are turned away."""

from __future__ import annotations

from engram.events.consumer import Drain


async def test_a_drain_waits_for_batches_in_flight_and_turns_new_ones_away() -> None:
    drain = Drain()
    assert await drain.wait(0.01) and not drain.draining
    drain.enter()
    drain.start()
    assert drain.draining and not await drain.wait(0.05)  # a batch is still running
    drain.leave()
    assert await drain.wait(0.05)
