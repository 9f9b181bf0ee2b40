"""The JetStream streams Engram publishes to, declared idempotently at start-up."""

from __future__ import annotations

from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import NotFoundError

from engram.config import Settings

DUPLICATE_WINDOW_S = 120.0


def deadletter_stream(settings: Settings) -> str:
    return f"{settings.events_stream}_DEADLETTER"


def deadletter_subject(settings: Settings, consumer: str) -> str:
    return f"{settings.events_subject_prefix}-deadletter.{consumer}"


async def ensure_streams(js: JetStreamContext, settings: Settings) -> None:
    """Create (or update) the event stream and its dead-letter stream."""
    day = 86_400.0
    for config in (
        StreamConfig(
            name=settings.events_stream,
            subjects=[f"{settings.events_subject_prefix}.>"],
            retention=RetentionPolicy.LIMITS,
            storage=StorageType.FILE,
            discard=DiscardPolicy.OLD,
            max_age=settings.events_max_age_days * day,
            duplicate_window=DUPLICATE_WINDOW_S,
            num_replicas=settings.events_replicas,
        ),
        StreamConfig(
            name=deadletter_stream(settings),
            subjects=[f"{settings.events_subject_prefix}-deadletter.>"],
            retention=RetentionPolicy.LIMITS,
            storage=StorageType.FILE,
            max_age=settings.events_max_age_days * day,
            num_replicas=settings.events_replicas,
        ),
    ):
        try:
            await js.stream_info(config.name or "")
            await js.update_stream(config)
        except NotFoundError:
            await js.add_stream(config)
