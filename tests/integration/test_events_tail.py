"""``engram events tail``'s consumer against the real JetStream: it starts where ``--since`` says, keeps to
the types asked for, stops after ``count``; and an unreachable server or a missing stream is one clear error."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from nats.js import JetStreamContext

from engram.config import Settings
from engram.errors import Unavailable
from engram.events.tail import subjects, tail
from engram.runtime.ports import free_port


def _event(kind: str, tenant: str) -> bytes:
    return json.dumps({"id": str(uuid.uuid4()), "type": f"engram.{kind}", "tenantid": tenant}).encode()


async def test_tail_replays_since_a_time_and_keeps_to_the_types(js: JetStreamContext, settings: Settings) -> None:
    assert settings.nats_url
    tenant, other = str(uuid.uuid4()), str(uuid.uuid4())
    for kind, who in [("memory.created", tenant), ("memory.embedded", tenant), ("memory.created", other)]:
        await js.publish(f"{settings.events_subject_prefix}.{who}.{kind}", _event(kind, who))
    lines: list[str] = []
    started: list[bool] = []
    filters = subjects(settings.events_subject_prefix, ["memory.created", "feedback.recorded"], tenant)
    since = datetime.now(UTC) - timedelta(minutes=5)
    printed = await tail(
        settings.nats_url, settings.events_stream, filters, since, lines.append, lambda: started.append(True), count=1
    )
    assert printed == 1 and started == [True]
    [event] = [json.loads(line) for line in lines]
    assert (event["type"], event["tenantid"]) == ("engram.memory.created", tenant)


async def test_an_unreachable_server_or_a_missing_stream_is_one_clear_error(settings: Settings) -> None:
    assert settings.nats_url
    with pytest.raises(Unavailable, match="unreachable"):
        await tail(f"nats://127.0.0.1:{free_port()}", "ENGRAM_EVENTS", ["engram.events.>"], None, print, print)
    with pytest.raises(Unavailable, match="no stream NO_SUCH_STREAM"):
        await tail(settings.nats_url, "NO_SUCH_STREAM", ["engram.events.>"], None, print, print)
