"""examples/subscriber.py against the real JetStream: it hands real ``memory.created`` events (written by a
real remember) to its handler, acknowledges them, has a failed one redelivered, and resumes after a restart
with what was published meanwhile, without seeing an acknowledged event again."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import asyncpg
import httpx
import pytest
from engram_client import AsyncEngramClient
from nats.js import JetStreamContext

from engram.config import Settings
from engram.domain.models import CallerContext
from tests.support.keys import KeyMaker
from tests.support.outbox import outbox_envelopes

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "subscriber.py"
RUN_TIMEOUT_S = 30.0


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("subscriber_example", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _publish_created(
    client: AsyncEngramClient, js: JetStreamContext, owner_pool: asyncpg.Pool, settings: Settings, content: str
) -> dict[str, Any]:
    """Remember ``content`` and publish its real outbox envelope to this test's stream, as the relay would."""
    item_id = (await client.remember(content)).id
    [envelope] = await outbox_envelopes(owner_pool, types=["memory.created"], subjects=[item_id])
    subject = f"{settings.events_subject_prefix}.{envelope['tenantid']}.memory.created"
    await js.publish(subject, json.dumps(envelope).encode(), headers={"Nats-Msg-Id": envelope["id"]})
    return envelope


async def test_the_example_subscriber_acks_retries_and_resumes(
    js: JetStreamContext,
    settings: Settings,
    gateway: httpx.AsyncClient,
    make_key: KeyMaker,
    tenant: CallerContext,
    owner_pool: asyncpg.Pool,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    example = _example()
    monkeypatch.setattr(example, "RETRY_DELAY_S", 0.2)
    client = AsyncEngramClient(api_key=(await make_key(tenant)).removeprefix("Bearer "), http_client=gateway)
    assert settings.nats_url
    first = await _publish_created(client, js, owner_pool, settings, "The subscriber example sees this one.")

    await example.handle(first)  # the example's own handler, with the real event
    assert first["data"]["item_id"] in capsys.readouterr().out

    handled: list[str] = []
    failures = [RuntimeError("index offline")]  # the first delivery fails once

    async def consume(expected: int) -> None:
        stop = asyncio.Event()

        async def handler(event: dict[str, Any]) -> None:
            if failures:
                raise failures.pop()
            handled.append(event["subject"])
            if len(handled) == expected:
                stop.set()

        run = example.run(
            settings.nats_url,
            durable="example-indexer",
            stream=settings.events_stream,
            prefix=settings.events_subject_prefix,
            handler=handler,
            stop=stop,
        )
        await asyncio.wait_for(run, RUN_TIMEOUT_S)

    await consume(expected=1)
    assert handled == [first["subject"]] and not failures  # failed once, redelivered, then handled
    info = await js.consumer_info(settings.events_stream, "example-indexer")
    assert (info.num_ack_pending, info.num_pending) == (0, 0)

    second = await _publish_created(client, js, owner_pool, settings, "Published while the subscriber was down.")
    await consume(expected=2)  # a restart: the acknowledged first event is not seen again
    assert handled == [first["subject"], second["subject"]]
