"""The JetStream streams as ensure_streams declares them (engram/events/stream.py)."""

from __future__ import annotations

import nats
import nats.js.errors
import pytest

from engram.config import Settings
from engram.events.stream import ensure_streams


async def test_the_streams_keep_the_configured_number_of_replicas(settings: Settings) -> None:
    """A single embedded server can hold one replica; asking for three there is refused by NATS, which shows
    the setting reaches the stream configuration."""
    assert settings.nats_url
    nc = await nats.connect(settings.nats_url)
    try:
        js = nc.jetstream()
        await ensure_streams(js, settings)
        assert (await js.stream_info(settings.events_stream)).config.num_replicas == 1
        with pytest.raises(nats.js.errors.APIError, match=r"(?i)replicas"):
            await ensure_streams(js, settings.model_copy(update={"events_replicas": 3}))
    finally:
        await nc.close()
